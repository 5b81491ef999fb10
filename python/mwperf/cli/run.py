"""``mwperf run``: every combination of the list options, measured into one
run directory (the tables on stdout, report.html beside the results).

Its options are the agent's option table (:mod:`mwperf.table`: the snapshot,
so that ``--help`` needs no agent), each with the table's help, choices,
range and default, plus the controller's own (where the sides run, the run
directory)."""

from __future__ import annotations

import argparse

from mwperf.cli import discovery, hosts, scenario
from mwperf.cli.common import described_agent, no_agent, run_outputs
from mwperf.errors import StorageError, UnitError, UsageError
from mwperf.execute.agent import ENV_AGENT
from mwperf.plan.budget import parse_max_duration
from mwperf.plan.options import DEFAULT_POINT_TIMEOUT, RunRequest
from mwperf.plan.validate import build_run_options
from mwperf.table import Row, snapshot
from mwperf.units import parse_list

__all__ = ["add_parser", "add_run_options", "add_table_options", "command", "request", "check_run_budget",
           "duration_limit"]

#: The help group of each of the table's groups.
GROUPS = {"point": "what is measured", "measure": "how it is measured",
          "qos": "QoS and transport (checked against what each middleware supports)"}


def _metavar(row: Row) -> str:
    if row.choices:
        one = "|".join(row.choices)
    else:
        one = {"bytes": "SIZE", "ns": "T", "hz": "HZ", "count": "N", "fraction": "P", "history": "keep-last:N|keep-all",
               "text": "NAME", "choice": "NAME"}.get(row.kind, "VALUE")
    return f"{one}[,...]" if row.point_key else one


def _help(row: Row) -> str:
    text = row.help
    if row.kind in ("bytes", "ns", "hz", "count") and row.min is not None and row.max is not None:
        text += f"; {row.shown(row.min)} to {row.shown(row.max)}"
    if row.capability is not None and row.choices is None and row.kind == "choice":
        text += "; the choices are each middleware's (mwperf doctor lists them)"
    if len(row.modes) < 4:
        text += f"; {' and '.join(row.modes)} mode only"
    if row.default is not None and row.kind != "flag":
        text += f" (default: {row.shown(row.default)})"
    if row.point_key and row.kind != "flag":
        text += "; a comma-separated list makes a point of each"
    return text.replace("%", "%%")


def add_table_options(parser: argparse.ArgumentParser) -> None:
    """An option for every user option of the agent's table, in the table's groups."""
    groups = {name: parser.add_argument_group(title) for name, title in GROUPS.items()}
    for row in snapshot().user_rows:
        group = groups[row.group]
        if row.kind == "flag":
            group.add_argument(row.flag, dest=row.key, action="store_true", help=_help(row))
        else:
            group.add_argument(row.flag, dest=row.key, metavar=_metavar(row), help=_help(row))


def add_parser(sub: argparse._SubParsersAction) -> None:
    run = sub.add_parser("run", help="run test points (mw x mode x every option's values)",
                         description="Run every combination of the options' comma-separated values "
                                     "(an option applies to the modes its help names).")
    add_run_options(run)
    scenario.add_arguments(run)  # mwperf run's alone (max-rate shares the options above)
    discovery.add_options(run)
    run.set_defaults(func=command)


def add_run_options(run: argparse.ArgumentParser) -> None:
    """``mwperf run``'s options: the table's, Perftest's spellings, and the controller's own."""
    add_table_options(run)
    sugar = run.add_argument_group("as RTI Perftest spells them")
    sugar.add_argument("--best", action="store_true", help="same as --reliability best-effort")
    sugar.add_argument("--keyed", action="store_true", help="keyed topic, writes round-robin over --instances "
                                                            "(default 1)")
    run.add_argument("--cpu", metavar="PUB,SUB",
                     help="cores to pin the publisher and subscriber to, or 'none' (default: 0,1; 0,0 on one CPU)")
    run.add_argument("--link", metavar="netns[:PROFILE]",
                     help="publisher and subscriber in two network namespaces joined by a veth pair; PROFILE: gige, "
                          "fast-ethernet, wifi, lossy:P%%, none, or rate=..,loss=..%%,delay=..ms,jitter=..ms")
    run.add_argument("--hosts", metavar="pub=USER@HOST,sub=USER@HOST",
                     help="run the agents on two hosts over ssh: each is given the agent bundle of its architecture "
                          "when it lacks it (mwperf hosts check does only that), unless --agent names the path there")
    run.add_argument("--data", metavar="pub=IP,sub=IP", help="with --hosts: the data addresses (default: the hosts)")
    run.add_argument("--direction", metavar="forward|both", help="with --hosts: both runs every point A->B, then B->A")
    hosts.add_far_options(run)
    run.add_argument("--keystore", metavar="DIR",
                     help="with --security: the DDS Security keystore to take the keys from, in SROS2's layout "
                          "(enclaves /mwperf/pub and /mwperf/sub; its governance sets the level); default: mwperf "
                          "makes a CA, the identities and the signed documents for the run, and removes them after")
    run.add_argument("--out", metavar="DIR", help="run directory (default: results/<UTC YYYYmmdd-HHMMSS>)")
    run.add_argument("--point-timeout", metavar="T",
                     help=f"extra slack on every per-point deadline before an agent counts as hung "
                          f"(default: {DEFAULT_POINT_TIMEOUT})")
    run.add_argument("--reuse-agents", action="store_true",
                     help="consecutive points that differ only in what may change between points (size, rate, "
                          "duration, ...: the agent's pair rows) share one agent pair opened for their largest size, "
                          "as Perftest's -scan; off by default: it can change what is measured (records say reuse)")
    run.add_argument("--launches", metavar="N", type=_whole,
                     help="launches a point (each its agents started for it, interleaved across the points, each "
                          "an equal share of --duration and --warmup; the headline and its interval come from "
                          "them; default: 6, or $MWPERF_LAUNCHES)")
    run.add_argument("--max-launches", metavar="N", type=_whole,
                     help="with --precision, the adaptive stop adds launches until the point's intervals are "
                          "within it, up to N in all (default: --launches: none added, what they would need said)")
    run.add_argument("--agent", metavar="PATH",
                     help=f"mwperf-agent binary (default: ${ENV_AGENT}, else agent/build/mwperf-agent, else PATH)")
    run.add_argument("--format", choices=("text", "md"), default="text", help="table format printed at the end")
    run.add_argument("--verbose", action="store_true",
                     help="print every table at the end (the floor, each middleware's, CPU per thread group, ...), "
                          "not only the headline; report.html has them all")
    run.add_argument("--db", metavar="STORE", help="results store to ingest the run into: a DuckDB file, "
                     "postgresql://..., or none (default: $MWPERF_DB, else results/mwperf.duckdb for runs in results/)")
    run.add_argument("--no-floor", action="store_true",
                     help="skip the floor (memcpy, socket and shared-memory ping-pongs at the run's sizes, a few "
                          "seconds before the first point; run.json records the skip)")
    run.add_argument("--force", action="store_true",
                     help="measure even while another mwperf measurement runs on this machine (both are perturbed)")
    run.add_argument("--max-points", metavar="N", type=_whole,
                     help="allow more points (launches) than 10000 (or $MWPERF_MAX_POINTS)")
    run.add_argument("--max-duration", metavar="D", type=duration_limit,
                     help="allow points estimated to take longer than 24h, e.g. 72h (or $MWPERF_MAX_DURATION)")


def check_run_budget(opts, max_points: int | None, max_duration_ns: int | None) -> None:
    """The run's points (each of its launches, both directions) against the limits of every plan
    (:func:`mwperf.plan.budget.check_budget`), before anything is made."""
    from mwperf.plan.budget import START_UP_S, check_budget
    from mwperf.plan.launches import default_launches

    launches = opts.launches or default_launches()
    directions = 2 if opts.both_directions and opts.hosts is not None else 1
    points = opts.points()
    check_budget("run", len(points) * launches * directions,
                 directions * sum(p.planned_s + launches * START_UP_S for p in points), max_points=max_points,
                 max_duration_ns=max_duration_ns, plan=False, what="points (launches)")


def duration_limit(text: str) -> int:
    """--max-duration D as argparse takes it (its error a line of argparse's)."""
    try:
        return parse_max_duration(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(f"{text}: {exc.reason}") from None


def _whole(text: str) -> int:
    if not text.strip().isdigit():
        raise argparse.ArgumentTypeError(f"{text}: expected a whole number")
    return int(text)


def _items(row: Row, text) -> tuple:
    """A given option's items: a comma list of one that identifies points, a flag as (True,)."""
    if row.kind == "flag":
        return (True,)
    if not row.point_key:
        return (text,)
    try:
        return tuple(parse_list(text))
    except UnitError as exc:
        raise UsageError(row.flag, text, str(exc)) from None


def request(ns: argparse.Namespace) -> RunRequest:
    """The parsed command line as the run's options before validation."""
    given = vars(ns)
    values = {row.name: _items(row, given[row.key]) for row in snapshot().user_rows
              if given.get(row.key) not in (None, False)}
    return RunRequest(values=values, best=ns.best, keyed=ns.keyed, cpu=ns.cpu, point_timeout=ns.point_timeout,
                      reuse_agents=bool(getattr(ns, "reuse_agents", False)), link=ns.link, hosts=ns.hosts,
                      data=ns.data, direction=ns.direction, out=ns.out, keystore=getattr(ns, "keystore", None),
                      launches=getattr(ns, "launches", None), max_launches=getattr(ns, "max_launches", None))


def command(ns: argparse.Namespace, argv: list[str]) -> int:
    from mwperf.cli.db import check_run_store, ingest_after_run
    from mwperf.execute import lock
    from mwperf.execute.keystore import check_keystore
    from mwperf.execute.point import check_placement
    from mwperf.execute.runner import run

    measures_discovery = discovery.wanted(ns)  # bad input first
    found = described_agent(ns.agent)
    if found is None:
        return no_agent()
    if measures_discovery:
        return discovery.run_mode(ns, argv, found[0])
    if ns.scenario:
        for flag, given in (("--launches", ns.launches), ("--max-launches", ns.max_launches)):
            if given is not None:
                raise UsageError(flag, str(given), "not with --scenario: a scenario's flows run together, once; "
                                                   "run it again for another launch")
        if getattr(ns, "reuse_agents", False):
            raise UsageError("--reuse-agents", None, "not with --scenario: a scenario's flows start together, one "
                                                     "agent set per flow and point")
        return scenario.command(ns, argv, request(ns), found)
    agent, agent_info = found
    opts = build_run_options(request(ns), agent_info, agent=agent)
    check_run_budget(opts, ns.max_points, ns.max_duration)
    far = None
    if opts.hosts is not None:  # the far side in place, the options checked against its agents (exit 2 if not)
        far, opts = hosts.checked_on_hosts(opts, request(ns), ns, agent)
    check_placement(opts)  # before the run directory is made
    check_keystore([opts])
    store = check_run_store(ns.db, opts.out)  # a store given that cannot be used: now, not after measuring
    from mwperf.results.confined import make_dirs

    try:
        make_dirs(opts.out)  # removed again at exit when the run writes nothing into it (a full disk)
    except StorageError as exc:
        raise UsageError("--out", str(opts.out), f"cannot create: {exc.reason}") from None
    with lock.hold(opts.out, force=ns.force, measure=opts.hosts is None, cores=str(opts.cpu), argv=argv) as held:
        outputs = run_outputs(ns.format, verbose=ns.verbose, stored=store is not None)
        return ingest_after_run(store, opts.out, run(opts, agent, argv, outputs=outputs, machine_lock=held.machine,
                                                     floor=not ns.no_floor, far=far))
