"""Discovery as a mode of ``mwperf run`` and ``mwperf sweep``
(``--mode discovery``, a plan with ``mode: discovery``): N participants (the
agent's ``discover``, docs/guide/discovery.md) with T topics, each
participant one writer and one reader on every topic; for every combination
of the lists: the time until every reader has matched every writer it should
and until each has its first sample, the pairs the middleware matched
(N x (N-1) x T), CPU and RSS per participant, and on ``--link netns`` the
discovery traffic the kernel counted on the link (nftables, packets and bytes).

Its options are the agent's ``discover`` rows (``--participants``,
``--topics``, ``--discovery``, ``--timeout``); ``--mw``, ``--link``, ``--out``,
``--agent``, ``--format`` and ``--force`` are run's. The records go to the run
directory's discovery.jsonl (a record kind of its own:
:mod:`mwperf.export.discovery_report` reads it), the tables to stdout and
report.html beside them."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from mwperf.errors import AgentError, UnitError, UsageError
from mwperf.plan.discovery_plan import MODE, ROWS, USER, checked_lists, given_of, load_discovery_plan
from mwperf.table import snapshot
from mwperf.units import parse_list

if TYPE_CHECKING:
    from mwperf.execute.discovery import DiscoveryPoint
    from mwperf.plan.sweep_plan import Plan
    from mwperf.plan.where import LinkProfile

__all__ = ["add_options", "wanted", "run_mode", "sweep_mode", "planned", "dry_run", "sweep_points", "check_links",
           "measure", "ROWS", "MODE"]

#: run's own options that mean nothing to participants (their values when not given).
NOT_HERE = {"cpu": None, "hosts": None, "data": None, "direction": None, "keystore": None, "scenario": None,
            "launches": None, "max_launches": None, "reuse_agents": False, "best": False, "keyed": False,
            "point_timeout": None, "db": None}


def add_options(parser: argparse.ArgumentParser) -> None:
    """The ``discover`` rows as run's options, in a group of their own."""
    mode = parser._option_string_actions["--mode"]
    mode.help = f"{mode.help}; {MODE}: N participants (the options of discovery mode), alone"
    mode.metavar = str(mode.metavar).replace("[,...]", f"|{MODE}[,...]")
    group = parser.add_argument_group("discovery mode (--mode discovery: N participants, not a pair)")
    for name in USER:
        row = ROWS[name]
        default = "" if row.default is None else f" (default: {row.shown(row.default)})"
        choices = f"{'|'.join(row.choices)}: " if row.choices else ""
        group.add_argument(row.flag, dest=f"disc_{row.key}", metavar="LIST" if name != "timeout" else "T",
                           help=f"{choices}{row.help}{default}".replace("%", "%%"))


def wanted(ns: argparse.Namespace) -> bool:
    """``--mode`` asks for discovery (alone: UsageError when with other modes); the discovery options without
    it are refused."""
    try:
        modes = parse_list(ns.mode) if ns.mode is not None else []
    except UnitError as exc:
        raise UsageError("--mode", ns.mode, str(exc)) from None
    if MODE not in modes:
        for name in USER:
            if getattr(ns, f"disc_{ROWS[name].key}", None) is not None:
                raise UsageError(ROWS[name].flag, getattr(ns, f"disc_{ROWS[name].key}"), "only with --mode discovery")
        return False
    if modes != [MODE]:
        raise UsageError("--mode", ns.mode, "discovery goes alone (its points are participants, not a pair)")
    for row in snapshot().user_rows:
        if row.name not in ("mw", "mode") and getattr(ns, row.key, None) not in (None, False):
            raise UsageError(row.flag, str(getattr(ns, row.key)), "not in discovery mode (N participants, not a "
                                                                  "pair: --participants, --topics, --discovery)")
    for key, unset in NOT_HERE.items():
        if getattr(ns, key, unset) != unset:
            raise UsageError(f"--{key.replace('_', '-')}", str(getattr(ns, key)), "not in discovery mode")
    return True


def run_mode(ns: argparse.Namespace, argv: list[str], agent: str) -> int:
    """``mwperf run --mode discovery``."""
    given = {"mw": ns.mw, "link": ns.link, **{name: getattr(ns, f"disc_{ROWS[name].key}") for name in USER}}
    return _measure(given, ns.out, agent, argv, ns.format, ns.force, limits=(ns.max_points, ns.max_duration))


def sweep_mode(ns: argparse.Namespace, argv: list[str], agent: str, lab: bool) -> int:
    """``mwperf sweep PLAN`` of a discovery plan (:mod:`mwperf.plan.discovery_plan`); ``lab``: a lab was asked."""
    for flag, value in (("--resume", ns.resume), ("--launches", ns.launches), ("--db", ns.db),
                        ("--inventory", "given" if lab else None)):
        if value is not None:
            raise UsageError(flag, str(value), "not with a discovery plan")
    given = given_of(load_discovery_plan(ns.plan))
    limits = (ns.max_points, ns.max_duration)
    if ns.dry_run:
        sys.stdout.write(dry_run(planned(given, ns.plan, limits=limits)[0]))
        return 0
    return _measure(given, ns.out, agent, argv, ns.format, ns.force, plan=ns.plan, limits=limits)


def planned(given: dict, plan: str | None = None, where: str = "",
            limits: tuple[int | None, int | None] | None = None) -> tuple[list[DiscoveryPoint], LinkProfile | None]:
    """Every point of the lists ``given`` (every combination, for each middleware) and the link; bad input
    names its option (UsageError) or, of a ``plan``, its key (PlanError; ``where``: inside ``also[i]``).
    ``limits`` (--max-points, --max-duration): the points counted and their time estimated first, refused
    over the limits before one is made (:func:`mwperf.plan.budget.check_budget`)."""
    from mwperf.execute.discovery import DiscoveryPoint
    from mwperf.plan.budget import check_budget
    from mwperf.plan.sweep_plan import discovery_count, discovery_point_s

    mws, lists, timeout, link = checked_lists(given, plan, where)
    if limits is not None:
        count = discovery_count(mws, lists)
        check_budget(plan or "run --mode discovery", count, count * discovery_point_s(lists, timeout),
                     max_points=limits[0], max_duration_ns=limits[1], plan=plan is not None,
                     what="discovery points")
    points = [DiscoveryPoint(mw, values["participants"], values["topics"], values["discovery"], timeout,
                             values["participants-as"])
              for mw in mws for values in (dict(zip(lists, combo)) for combo in _combos(lists))]
    return points, link


def dry_run(points: list[DiscoveryPoint]) -> str:
    """The points, one a line, then their count."""
    return "".join(f"{p.mw} participants={p.participants} topics={p.topics} participants-as={p.participants_as} "
                   f"discovery={p.discovery}\n" for p in points) + f"{len(points)} discovery point(s)\n"


def sweep_points(plan: Plan) -> list[tuple[DiscoveryPoint, LinkProfile | None]]:
    """A sweep plan's discovery points (its ``also`` list's discovery matrices), validated; PlanError naming
    ``also[i].key``."""
    return [(point, link) for matrix in plan.discovery
            for points, link in (planned(given_of(matrix.options), plan.source, matrix.where),) for point in points]


def _combos(lists: dict[str, list]) -> list[tuple]:
    combos: list[tuple] = [()]
    for values in lists.values():
        combos = [(*c, v) for c in combos for v in values]
    return combos


def point_key(mw: str, participants: int, topics: int, discovery: str, participants_as: str | None,
              link: dict | None) -> tuple:
    """What identifies a discovery point (a record of discovery.jsonl is done: ``--resume`` skips its point)."""
    return mw, participants, topics, discovery, participants_as or "processes", (link or {}).get("profile")


def check_links(points: list[tuple[DiscoveryPoint, LinkProfile | None]]) -> None:
    """UsageError when a point's namespace pair cannot be made here (before anything is measured)."""
    from mwperf.execute.netns import NetnsPair

    for link in dict.fromkeys(link for _, link in points if link is not None):
        NetnsPair.check_possible(link)


def measure(points: list[tuple[DiscoveryPoint, LinkProfile | None]], agent: str, out: Path,
            progress: TextIO | None = None) -> list[dict]:
    """Each point not yet in ``out``'s discovery.jsonl (any record of it: a failed point was measured) in
    turn, its record appended there the moment it is measured (``progress``: a line each); the records
    measured. The caller holds the machine lock."""
    from mwperf.execute.agent import describe
    from mwperf.execute.runner import clean_and_say

    check_links(points)
    try:
        return _measure_points(points, agent, out, progress)
    finally:  # what the participants left (zenoh's segments, ROS 2's tracing library's) goes now, not next run
        clean_and_say(progress or sys.stderr, "after the discovery points", describe(agent).leftovers, agent)


def _measure_points(points: list[tuple[DiscoveryPoint, LinkProfile | None]], agent: str, out: Path,
                    progress: TextIO | None) -> list[dict]:
    from mwperf.execute.discovery import run_point
    from mwperf.export.discovery_report import RESULTS, read_discovery

    done = {point_key(r["mw"], r["participants"], r["topics"], r["discovery"], r.get("participants_as"),
                      r.get("link")) for r in read_discovery(out, lambda m: None)}
    records = []
    for point, link in points:
        where = link.as_dict() if link else None
        if point_key(point.mw, point.participants, point.topics, point.discovery, point.participants_as,
                     where) in done:
            continue
        if progress is not None:
            progress.write(f"discovery: {point.mw} N={point.participants} T={point.topics} {point.discovery} ...\n")
            progress.flush()
        try:
            record = run_point(agent, point, link)
        except AgentError as exc:
            record = {"mw": point.mw, "mode": MODE, "participants": point.participants, "topics": point.topics,
                      "discovery": point.discovery, "participants_as": point.participants_as, "link": where,
                      "error": str(exc)}
        records.append(record)
        with open(out / RESULTS, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")
    return records


def _measure(given: dict, out_dir: str | None, agent: str, argv: list[str], fmt: str, force: bool,
             plan: str | None = None, limits: tuple[int | None, int | None] = (None, None)) -> int:
    from mwperf.execute import lock
    from mwperf.export.discovery_report import RESULTS, all_sections, discovery_report
    from mwperf.export.tables import render_markdown, render_text
    from mwperf.plan.validate import default_out
    from mwperf.results.rundir import check_new_dir

    points, link = planned(given, plan, limits=limits)
    check_links([(point, link) for point in points])
    out = check_new_dir(Path(out_dir) if out_dir else default_out())
    if (out / RESULTS).exists():
        raise UsageError("--out", str(out), f"already holds {RESULTS} (choose a new directory)")
    with lock.hold(out, force=force, argv=argv):
        records = measure([(point, link) for point in points], agent, out)
        report = discovery_report(records, out, f"mwperf discovery {out.name}")
    sections = all_sections(records)
    sys.stdout.write(render_markdown(sections) if fmt == "md" else render_text(sections))
    sys.stdout.write(f"report: {report}\n")
    return 0 if all(r.get("complete") for r in records) else 1
