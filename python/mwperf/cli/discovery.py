"""``mwperf discovery``: discovery as a measured mode. N participants (one
agent process each) with T topics, each participant one writer and one reader
on every topic; for every combination of the lists: the time until every
reader has matched every writer it should and until each has its first
sample, the pairs the middleware matched (N x (N-1) x T), CPU and RSS per
participant, and on ``--link netns`` the discovery traffic the kernel counted
on the link (nftables, packets and bytes). ``--discovery``: ``unicast``
(loopback, unicast peers, multicast off: what mwperf's points use), ``default``
(the middleware's own defaults, multicast; a namespace pair only) or
``tuned`` (its scalable settings: Cyclone DDS's AllowMulticast spdp, on a
namespace pair only; Fast DDS's Discovery Server, participant 0 serving).
With ``--out DIR`` the records go to DIR/discovery.jsonl."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mwperf.cli.common import described_agent, no_agent
from mwperf.errors import AgentError, UnitError, UsageError
from mwperf.plan.discovery_plan import load_discovery_plan
from mwperf.table import Row, snapshot
from mwperf.units import parse_list

__all__ = ["add_parser", "command", "parse_lists"]

#: The agent's ``discover`` rows, by name.
ROWS = snapshot().command("discover")
RESULTS = "discovery.jsonl"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("discovery", help="discovery as participants and topics grow: time to match, to the first "
                                         "sample, CPU, RSS, traffic on the link", description=__doc__)
    p.add_argument("--plan", metavar="FILE", help="a discovery plan (plans/discovery.yaml): the lists below from a "
                                                  "file (the command line's win)")
    p.add_argument("--mw", metavar="LIST", help="middlewares (cyclonedds, cyclonedds11, fastdds)")
    p.add_argument("--participants", metavar="LIST", help=ROWS["participants"].help + " (e.g. 2,5,10)")
    p.add_argument("--topics", metavar="LIST", help=ROWS["topics"].help + " (default: 1)")
    p.add_argument("--discovery", metavar="LIST",
                   help=f"{'|'.join(ROWS['discovery'].choices or ())}: {ROWS['discovery'].help} "
                        f"(default: {ROWS['discovery'].default})")
    p.add_argument("--link", metavar="netns[:PROFILE]",
                   help="a namespace pair joined by a veth: the participants alternate between the two, the kernel "
                        "counts the traffic on the link")
    p.add_argument("--timeout", metavar="T",
                   help=f"{ROWS['timeout'].help} (default: {ROWS['timeout'].shown(ROWS['timeout'].default)})")
    p.add_argument("--out", metavar="DIR", help=f"append the records to DIR/{RESULTS}")
    p.add_argument("--agent", metavar="PATH", help="mwperf-agent binary")
    p.add_argument("--format", choices=("text", "md"), default="text", help="table format")
    p.add_argument("--force", action="store_true",
                   help="measure even while another mwperf measurement runs on this machine (both are perturbed)")
    p.set_defaults(func=command)


def _values(flag: str, row: Row, text: str) -> list:
    try:
        items = parse_list(text)
    except UnitError as exc:
        raise UsageError(flag, text, str(exc)) from None
    try:
        return list(dict.fromkeys(row.parse(item) for item in items))
    except ValueError as exc:
        raise UsageError(flag, text, str(exc)) from None


def parse_lists(ns: argparse.Namespace) -> tuple[list[str], list[int], list[int], list[str], int]:
    """The lists and the timeout as machine values; UsageError naming the bad one (exit 2)."""
    plan = load_discovery_plan(ns.plan) if ns.plan is not None else {}
    defaults = {"topics": "1", "discovery": ROWS["discovery"].default,
                "timeout": ROWS["timeout"].shown(ROWS["timeout"].default), "link": None}
    for key in ("mw", "participants", "topics", "discovery", "timeout", "link"):
        if getattr(ns, key) is None:
            setattr(ns, key, plan.get(key, defaults.get(key)))
    for key in ("mw", "participants"):
        if getattr(ns, key) is None:
            raise UsageError(f"--{key}", None, "required (or a --plan that names it)")
    mws = _values("--mw", ROWS["mw"], ns.mw)
    participants = _values("--participants", ROWS["participants"], ns.participants)
    topics = _values("--topics", ROWS["topics"], ns.topics)
    profiles = _values("--discovery", ROWS["discovery"], ns.discovery)
    try:
        timeout = ROWS["timeout"].parse(ns.timeout)
    except ValueError as exc:
        raise UsageError("--timeout", ns.timeout, str(exc)) from None
    if ns.link is None:
        for profile in profiles:
            if profile == "default":
                raise UsageError("--discovery", profile, "multicasts: it runs only on a namespace pair's link "
                                                         "(--link netns), never on this machine's own network")
    return mws, participants, topics, profiles, timeout


def command(ns: argparse.Namespace, argv: list[str]) -> int:
    from mwperf.execute import lock
    from mwperf.execute.discovery import DiscoveryPoint, run_point
    from mwperf.execute.netns import NetnsPair
    from mwperf.export.discovery import discovery_sections
    from mwperf.export.tables import render_markdown, render_text
    from mwperf.plan.where import parse_link

    mws, participants, topics, profiles, timeout = parse_lists(ns)
    link = parse_link(ns.link) if ns.link is not None else None
    if link is not None:
        NetnsPair.check_possible(link)
    found = described_agent(ns.agent)
    if found is None:
        return no_agent()
    out = Path(ns.out) if ns.out is not None else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    records = []
    with lock.measuring(force=ns.force, argv=argv):
        for mw in mws:
            for profile in profiles:
                for n in participants:
                    for t in topics:
                        point = DiscoveryPoint(mw, n, t, profile, timeout)
                        try:
                            record = run_point(found[0], point, link)
                        except AgentError as exc:
                            record = {"mw": mw, "discovery": profile, "participants": n, "topics": t,
                                      "link": link.as_dict() if link else None, "error": str(exc)}
                        records.append(record)
                        if out is not None:
                            with open(out / RESULTS, "a", encoding="utf-8") as f:
                                f.write(json.dumps(record) + "\n")
    sections = discovery_sections(records)
    sys.stdout.write(render_markdown(sections) if ns.format == "md" else render_text(sections))
    return 0 if all(r.get("complete") for r in records) else 1
