"""``mwperf hosts check --hosts pub=USER@HOST,sub=USER@HOST``: what ``--hosts``
does before a run's first point, and only that: each host asked what it is
(architecture, glibc, kernel, CPU, free space, a writable cache), refused
with the reason when no bundle can run there (one line, exit 2), given the
bundle of its architecture when it lacks it; then one line per host says
what it is and which agent it runs.

Also the options every command with ``--hosts`` shares (:func:`add_far_options`)
and the step they take before measuring (:func:`far_side`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mwperf.errors import UsageError

__all__ = ["add_parser", "add_far_options", "command", "far_side", "checked_on_hosts"]


def add_far_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--remote-dir", metavar="DIR",
                        help="with --hosts: the far hosts' bundle cache (default: ~/.cache/mwperf/bundles of the "
                             "ssh user; a relative DIR is in that user's home); each bundle in DIR/<hash>")
    parser.add_argument("--bundles", metavar="DIR",
                        help="with --hosts: where the bundles are on this host (default: bundles/ in the checkout; "
                             "make them with mwperf bundle --arch x86_64|aarch64)")


def add_parser(sub: argparse._SubParsersAction) -> None:
    hosts = sub.add_parser("hosts", help="check the --hosts hosts and put the agent bundle in place there",
                           description="What --hosts does before a run's first point, and only that.")
    verbs = hosts.add_subparsers(dest="verb", metavar="check")
    check = verbs.add_parser("check", help="ask each host what it is, refuse or give it its bundle",
                             description="Ask each host (over ssh, as the user given) its architecture, glibc, "
                                         "kernel, CPU, free space and whether its cache can be written; copy the "
                                         "bundle of its architecture when it lacks it; print what each host is.",
                             epilog="example:\n  mwperf hosts check --hosts pub=me@10.0.0.1,sub=robot@10.0.0.2",
                             formatter_class=argparse.RawDescriptionHelpFormatter)
    check.add_argument("--hosts", metavar="pub=USER@HOST,sub=USER@HOST", required=True)
    check.add_argument("--data", metavar="pub=IP,sub=IP", help="the data addresses (default: the hosts)")
    check.add_argument("--agent", metavar="PATH", help="the agent's path on both hosts (nothing copied)")
    add_far_options(check)
    check.set_defaults(func=command)
    hosts.set_defaults(func=lambda ns, argv: _no_verb())


def _no_verb() -> int:
    raise UsageError("hosts", None, "a verb is required: check")


def far_side(pair, ns: argparse.Namespace, out=None, check=None):
    """The hosts of ``pair`` ready (:func:`mwperf.hosts.prepare.prepare`, ``check`` its), saying on ``out`` what
    was copied."""
    from mwperf.hosts.prepare import prepare

    out = out or sys.stderr
    side = prepare(pair, Path(ns.bundles) if getattr(ns, "bundles", None) else None,
                   getattr(ns, "remote_dir", None), getattr(ns, "agent", None), check)
    for target, placed in side.placed.items():
        if placed.state in ("copied", "raced") and placed.bundle is not None:
            out.write(f"mwperf: {target}: bundle {placed.bundle.hash[:12]} ({placed.bundle.arch}) {placed.phase()}\n")
    out.flush()
    return side


def checked_on_hosts(opts, req, ns: argparse.Namespace, agent: str):
    """The far side in place (:func:`far_side`) and the run's options checked against the agent of each
    host's bundle (its description.jsonl), not this host's: (the far side, the options to run)."""
    from dataclasses import replace

    from mwperf.errors import BadInput
    from mwperf.hosts.prepare import buffer_warnings
    from mwperf.plan.validate import build_run_options

    built = {}

    def check(target, bundle, info) -> None:
        try:
            built[target] = build_run_options(req, info, agent=agent)
        except BadInput as exc:
            raise UsageError("--hosts", target, f"its {bundle.arch} bundle's agent: {exc}") from None

    side = far_side(opts.hosts, ns, check=check)  # each host's options checked before anything is copied
    # the publisher's bundle's: its table, timing and adapters (--agent: this host's)
    opts = replace(built.get(side.pair.pub, opts), hosts=side.pair)
    buffer_warnings(side.pair, [p.get("size") for p in opts.points() if isinstance(p.get("size"), int)], sys.stderr)
    return side, opts


def command(ns: argparse.Namespace, argv: list[str]) -> int:
    from mwperf.execute.ssh import close_shared_connections
    from mwperf.plan.where import parse_hosts

    pair = parse_hosts(ns.hosts, ns.data)
    try:
        side = far_side(pair, ns)
    finally:
        close_shared_connections()
    for target, placed in side.placed.items():
        where = f"bundle {placed.bundle.hash[:12]} {placed.state}" if placed.bundle else "--agent"
        sys.stdout.write(f"{target}: {placed.facts.describe()}; agent {placed.agent} ({where})\n")
    return 0
