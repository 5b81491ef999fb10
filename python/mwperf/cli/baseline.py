"""``mwperf baseline --link netns[:PROFILE] --out DIR``: iperf3 TCP and UDP
over the link, stored as DIR/baseline.json for the report."""

from __future__ import annotations

import argparse
import sys

from mwperf.errors import UnitError, UsageError
from mwperf.plan.where import parse_link
from mwperf.units import parse_duration_ns

__all__ = ["add_parser", "command"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    base = sub.add_parser("baseline", help="iperf3 TCP and UDP over a --link, stored with a run")
    base.add_argument("--link", metavar="netns[:PROFILE]", required=True, help="the link to measure")
    base.add_argument("--out", metavar="DIR", required=True, help="run directory (baseline.json goes there)")
    base.add_argument("--duration", metavar="T", default="5s", help="each iperf3 test (default: 5s)")
    base.add_argument("--force", action="store_true",
                      help="measure even while another mwperf measurement runs on this machine (both are perturbed)")
    base.set_defaults(func=command)


def command(ns: argparse.Namespace, argv: list[str]) -> int:
    from mwperf.execute import lock
    from mwperf.execute.baseline import measure
    from mwperf.execute.netns import NetnsPair
    from mwperf.interrupts import sigterm_as_interrupt
    from mwperf.results.rundir import RunDir

    NetnsPair.check_possible()
    profile = parse_link(ns.link)
    try:
        seconds = parse_duration_ns(ns.duration) / 1e9
    except UnitError as exc:
        raise UsageError("--duration", ns.duration, str(exc)) from None
    with lock.hold(ns.out, force=ns.force, argv=argv), sigterm_as_interrupt():  # a hang-up: the namespaces go
        doc = measure(profile, seconds)
        path = RunDir(ns.out).write_baseline(doc)
    tcp, udp = doc["tcp"], doc["udp"]
    sys.stdout.write(f"link {profile.name}: iperf3 TCP {tcp['gbps']:.3f} Gbit/s, UDP (65507 B) {udp['gbps']:.3f} "
                     f"Gbit/s received, {udp['lost_percent'] or 0:.2f} % lost -> {path}\n")
    return 0
