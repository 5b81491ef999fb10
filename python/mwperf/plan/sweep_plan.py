"""Sweep plans: a YAML file of ``mwperf run`` options, each a value or a list.

The keys are the options of the agent's table (``latency_count`` for
``--latency-count``) and the controller's own (``cpu``, ``link``,
``point_timeout``, ``keyed``). Lists expand to the product of every option
that applies to a point's mode (``rate`` only to rate points, ``demand`` and
``burst_gap`` to burst points: the table says which), so a plan expands to
as many points as it yields; a key that applies to no point of the plan is
an error, not dropped. ``mw: built`` is every middleware the agent is built
with that honours the plan's options; ``exclude`` rules prune points; ``also``
lists more matrices, each its own options and exclude rules
(:mod:`mwperf.plan.matrix`: the quick plan's secured points; one with
``mode: discovery`` is a discovery matrix, measured after the others); ``launches`` (``repetitions``: its
older name) is how many launches each point is measured as, 6 unless given,
interleaved across the points, each an equal share of the point's duration
and warm-up (:mod:`mwperf.plan.launches`); ``max_launches``: up to how many
the adaptive stop (``precision``) may take.
A plan with a ``search`` mapping (``loss``, ``p99``, ``step``, ``bounds``:
``mwperf max-rate``'s options) is a max-rate plan: its rate is where each
search starts, and ``mwperf max-rate PLAN`` runs it.
The plan is validated as ``mwperf run`` validates its options, and an error
names the plan, the offending key and the value::

    plans/mine.yaml: size: 70000: udp carries at most 65507 bytes per message

Exclude rules are mappings whose conditions must all hold:

* ``KEY: VALUE`` or ``KEY: [VALUES]`` for an option (``mw: udp``, ``size: 16MiB``);
* ``size_over`` / ``size_under`` / ``rate_over`` / ``rate_under``: bounds;
* ``offered_gbps_over: G``: rate-mode points offering more than G Gbit/s
  (size x rate).

Each expanded point carries a key (a hash of every option that identifies
it, and its repetition) so that ``mwperf sweep --resume`` runs only the
points whose key is not in results.jsonl yet.
"""

from __future__ import annotations

from functools import partial
import hashlib
import itertools
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from mwperf.description import AgentInfo
from mwperf.errors import PlanError, Unsupported, UsageError
from mwperf.plan.checks import refused_option
from mwperf.plan.discovery_plan import DiscoveryMatrix, checked_lists, given_of
from mwperf.plan.launches import default_launches, interleaved
from mwperf.plan.matrix import (ALSO, BUILT, CONTROLLER_KEYS, Matrix, excluded, key_name, normal, option_keys,
                                parse_also, parse_matrix, settings_of)
from mwperf.plan.options import PlannedPoint, RunOptions, RunRequest, TestPoint
from mwperf.plan.plan_file import load_yaml, read_plan_text
from mwperf.plan.budget import ENV_MAX_POINTS, MAX_POINTS, START_UP_S, check_budget, max_points_default
from mwperf.plan.validate import build_run_options, check_point
from mwperf.table import OptionTable, snapshot

__all__ = ["Plan", "load_plan", "parse_plan", "expand", "count_points", "check_size", "point_hash", "option_keys",
           "MAX_POINTS", "ENV_MAX_POINTS", "launches_s", "discovery_count", "discovery_point_s"]

#: The plan's own keys (its matrices' are options, :mod:`mwperf.plan.matrix`).
SWEEP_KEYS = ("launches", "repetitions", "max_launches", "description", "search", ALSO)
#: A max-rate plan's ``search`` keys (``mwperf max-rate``'s options of the same names).
SEARCH_KEYS = ("loss", "p99", "step", "bounds")
MAX_REPETITIONS = 1000
#: From this many points, the count is printed before the plan is expanded.
ANNOUNCE_POINTS = 1_000


@dataclass(frozen=True)
class Plan:
    source: str
    options: Mapping[str, tuple]  # key -> values (each a str, or a bool for flags)
    exclude: tuple[Mapping[str, Any], ...]
    repetitions: int | None  # launches a point (None: not given, the default)
    description: str | None
    text: str  # the plan as written (saved in the run directory)
    search: Mapping[str, str] | None = None  # a max-rate plan's criterion, as written
    max_launches: int | None = None  # the adaptive stop's most launches a point (None: the launches)
    also: tuple[Matrix, ...] = ()  # the matrices after the main one (``also:``)
    discovery: tuple[DiscoveryMatrix, ...] = ()  # ``also``'s discovery matrices (measured after the others)

    @property
    def launches(self) -> int:
        return self.repetitions or default_launches()

    @property
    def matrices(self) -> tuple[Matrix, ...]:
        """The main matrix (its top-level options and exclude rules), then ``also``'s."""
        return (Matrix(self.options, self.exclude), *self.also)


def parse_plan(text: str, source: str = "plan") -> Plan:
    """Check the plan's structure and keys (not yet the values: see :func:`expand`).
    The YAML is read bounded (:mod:`mwperf.plan.plan_file`: no aliases, no key twice)."""
    data = load_yaml(text, source)
    if not isinstance(data, dict):
        raise PlanError(source, None, None, "expected a mapping of mwperf run options (mw: ..., size: ...)")
    repetitions: int | None = None
    max_launches: int | None = None
    description = None
    search = None
    also: tuple[Matrix, ...] = ()
    discovery: tuple[DiscoveryMatrix, ...] = ()
    own: dict[str, Any] = {}
    for raw_key, value in data.items():
        key = key_name(str(raw_key))
        if key not in SWEEP_KEYS:
            own[raw_key] = value
        elif key in ("launches", "repetitions", "max_launches"):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_REPETITIONS:
                raise PlanError(source, str(raw_key), str(value), f"must be a whole number from 1 to {MAX_REPETITIONS}")
            if key == "max_launches":
                max_launches = value
            elif repetitions is not None:
                raise PlanError(source, str(raw_key), str(value), "launches and repetitions are one key: keep one")
            else:
                repetitions = value
        elif key == "search":
            search = _search(source, value)
        elif key == "description":
            if isinstance(value, (dict, list)):
                raise PlanError(source, "description", None, "expected text")
            description = None if value is None else str(value)
        else:
            also, discovery = parse_also(source, value, SWEEP_KEYS)
    main = parse_matrix(source, own, "", SWEEP_KEYS)
    if search is not None and (also or discovery):
        raise PlanError(source, ALSO, None, "not in a max-rate plan (its searches are one matrix)")
    if max_launches is not None and max_launches < (repetitions or default_launches()):
        raise PlanError(source, "max_launches", str(max_launches),
                        f"fewer than the launches ({repetitions or default_launches()})")
    return Plan(source, main.options, main.exclude, repetitions, description, text, search, max_launches, also,
                discovery)


def _search(source: str, raw: Any) -> dict[str, str]:
    """A max-rate plan's criterion as written (``mwperf max-rate`` checks its values)."""
    if not isinstance(raw, dict) or not raw:
        raise PlanError(source, "search", None, "expected a mapping, e.g. {loss: 1%, p99: 2ms}")
    out = {}
    for key, value in raw.items():
        if str(key) not in SEARCH_KEYS:
            raise PlanError(source, f"search.{key}", None, f"unknown key (known: {', '.join(SEARCH_KEYS)})")
        if value is None or isinstance(value, (dict, list, bool)):
            raise PlanError(source, f"search.{key}", None, "expected one value")
        out[str(key)] = str(value)
    return out


def load_plan(path: str | Path) -> Plan:
    """The plan in file ``path`` (a regular file of at most MAX_PLAN_BYTES), parsed."""
    return parse_plan(read_plan_text(path), str(path))


def count_points(plan: Plan) -> int:
    """How many points the plan expands to before its exclude rules (and before
    settings written twice, as 1k and 1024, are merged): each mode's product of
    the lengths of the keys that apply to it, times the repetitions. Arithmetic
    only, so a plan of any size is counted at once."""
    table = snapshot()
    total = 0
    for matrix in plan.matrices:
        for mode in matrix.options.get("mode", (table["mode"].default,)):
            product = 1
            for key, values in matrix.options.items():
                row = table.by_key(key)
                if key == "mode" or (row is not None and not row.applies(normal("mode", mode))):
                    continue
                product *= len(values)
            total += product
    return total * plan.launches


def check_size(plan: Plan, max_points: int | None = None, note: Callable[[str], None] | None = None) -> int:
    """The plan's point count (:func:`count_points`); PlanError when it is over
    ``max_points`` (default :func:`max_points_default`); a large one is announced
    through ``note`` before anything is expanded."""
    limit = max_points if max_points is not None else max_points_default()
    count = count_points(plan)
    if count > limit:
        raise PlanError(plan.source, None, None,
                        f"{count} points (before exclude rules): more than the {limit} a sweep may have "
                        f"(--max-points N or {ENV_MAX_POINTS}=N raises the limit)")
    if count >= ANNOUNCE_POINTS and note is not None:
        note(f"{plan.source}: expanding and checking {count} points (before exclude rules) ...")
    return count


def _stderr_note(text: str) -> None:
    sys.stderr.write(f"mwperf: {text}\n")
    sys.stderr.flush()


def _plan_key(option: str | None) -> str:
    """The plan key a run option is set by; an option a plan cannot set
    (``--out``) is about the point as a whole, named by its middleware."""
    name = key_name(option[2:]) if option and option.startswith("--") else None
    if name == "best":
        return "reliability"
    return name if name in option_keys() else "mw"


def point_hash(opts: RunOptions, point: TestPoint, repetition: int) -> str:
    """The sweep's hash of a planned point (the record's ``point_key``, what ``--resume`` matches): a hash
    of what identifies the point (every option of the table that
    does, and the controller's placement and link) and its repetition."""
    identifying = {name: value for name, value in point.values if opts.table[name].point_key}
    config = {"mw": point.mw, "mode": point.mode, "repetition": repetition, "cpu": str(opts.cpu),
              "link": opts.link.name if opts.link else None, **identifying}
    if opts.hosts is not None and opts.hosts.name is not None:  # a lab's pair of hosts (sweep --inventory)
        config["host_pair"] = opts.hosts.name
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]


def _request(options: Mapping[str, tuple], own: Mapping[str, Any], out: Path, table: OptionTable,
             hosts: str | None = None) -> RunRequest:
    values = {}
    for key, items in options.items():
        row = table.by_key(key)
        if row is not None:
            values[row.name] = items
    return RunRequest(values=values, keyed=bool(own.get("keyed")), cpu=own.get("cpu"),
                      point_timeout=own.get("point_timeout"), link=own.get("link"), out=str(out),
                      reuse_agents=bool(own.get("reuse_agents")), hosts=hosts)


def _shown_setting(table: OptionTable, settings: Mapping[str, Any], key: str) -> Any:
    """A point's setting of ``key`` as the plan would write it (the table's rendering of its option)."""
    row = table.by_key(key)
    return row.shown(settings[key]) if row is not None and key in settings else settings.get(key)


def _planned(plan: Plan, matrix: Matrix, error: UsageError, agent_info: AgentInfo,
             value_of: Callable[[str], Any]) -> PlanError:
    """A run option's error as the plan's: the key it is about (in its matrix), and how to exclude it."""
    key = _plan_key(error.option)
    hint = ""
    if isinstance(error, Unsupported):
        rule = f"size_over: {agent_info.adapters[error.mw].max_size}" if key == "size" else f"{key}: {value_of(key)}"
        hint = f" (exclude it: {{mw: {error.mw}, {rule}}})"
    return PlanError(plan.source, matrix.key(key), error.value, error.reason + hint)


def expand(plan: Plan, *, out: Path, agent: str | None, agent_info: AgentInfo,
           cpu_count: int | None = None, max_points: int | None = None,
           note: Callable[[str], None] | None = _stderr_note, launches: int | None = None,
           hosts: str | None = None, max_duration_ns: int | None = None) -> list[PlannedPoint]:
    """Every launch of every point of the plan (``launches``: instead of the plan's), in rounds, excluded
    points removed, each validated; PlanError names the first bad one, or a plan of more than
    ``max_points`` points (:func:`check_size`), or one estimated to take longer than ``max_duration_ns``
    (:func:`mwperf.plan.budget.check_budget`, its discovery matrices' points at their timeout).
    ``hosts``: the points run between two hosts (``pub=USER@HOST,sub=USER@HOST``, as --hosts), validated
    as such."""
    check_size(plan, max_points, note)
    points: list[tuple[RunOptions, TestPoint]] = []
    seen: set[str] = set()  # the same configuration written twice (1k and 1024, in two matrices) runs once
    for matrix in plan.matrices:
        points += _matrix_points(plan, matrix, seen, out=out, agent=agent, agent_info=agent_info,
                                 cpu_count=cpu_count, hosts=hosts)
    if not points:
        raise PlanError(plan.source, "exclude", None, "every point is excluded")
    extra_points, extra_s = 0, 0.0
    for discovery in plan.discovery:  # measured after the others (mwperf.cli.discovery): checked as these are
        mws, lists, timeout_ns, _ = checked_lists(given_of(discovery.options), plan.source, discovery.where)
        for mw in (mw for mw in mws if mw not in agent_info.adapters):
            raise PlanError(plan.source, f"{discovery.where}.mw", mw, "not built here (built: "
                                                                      f"{', '.join(sorted(agent_info.adapters))})")
        count = discovery_count(mws, lists)
        extra_points, extra_s = extra_points + count, extra_s + count * discovery_point_s(lists, timeout_ns)
    jobs = interleaved(points, launches or plan.launches, plan.max_launches, point_hash, numbered=True)
    check_budget(plan.source, len(jobs) + extra_points, launches_s(jobs) + extra_s, max_points=max_points,
                 max_duration_ns=max_duration_ns)
    return jobs


def launches_s(jobs: list[PlannedPoint]) -> float:
    """The least the launches take: each one's warm-up, duration and a start-up."""
    return sum(job.point.planned_s + START_UP_S for job in jobs)


def discovery_count(mws: list, lists: dict[str, list]) -> int:
    """How many points the lists of a discovery plan make (every combination, for each middleware)."""
    count = len(mws)
    for values in lists.values():
        count *= len(values)
    return count


def discovery_point_s(lists: dict[str, list], timeout_ns: int) -> float:
    """The least a discovery point of these lists takes: its participants started (their median count)."""
    participants = sorted(lists.get("participants") or [1])
    return participants[len(participants) // 2] * START_UP_S


def _built(plan: Plan, matrix: Matrix, opts: RunOptions) -> None:
    """``mw: built`` chose every built middleware when none honours all of the matrix's options: refused."""
    for name in opts.mws:
        problem = refused_option(opts.table, opts.values, opts.adapters[name])
        if problem is not None:
            raise PlanError(plan.source, matrix.key("mw"), BUILT, f"no middleware built here honours every option "
                                                                  f"of this matrix ({name}: {problem})")


def _matrix_points(plan: Plan, matrix: Matrix, seen: set[str], *, out: Path, agent: str | None, agent_info: AgentInfo,
                   cpu_count: int | None, hosts: str | None) -> list[tuple[RunOptions, TestPoint]]:
    """The points of one matrix of the plan, excluded ones removed, each validated; not those in ``seen``."""
    table = agent_info.table
    options = dict(matrix.options)
    built = options.get("mw") == (BUILT,)
    if built:  # every middleware this agent is built with that honours the matrix's options: the run's choice
        del options["mw"]
    own_keys = [k for k in CONTROLLER_KEYS if k in options]
    points: list[tuple[RunOptions, TestPoint]] = []
    for combo in itertools.product(*(options[k] for k in own_keys)):
        own = dict(zip(own_keys, combo))
        table_options = {k: v for k, v in options.items() if k not in CONTROLLER_KEYS}
        try:
            opts = build_run_options(_request(table_options, own, out, table, hosts), agent_info, agent=agent,
                                     cpu_count=cpu_count, check_out=False, check_points=False)
        except UsageError as exc:
            raise _planned(plan, matrix, exc, agent_info,
                           lambda key: ",".join(map(str, options.get(key, ())))) from None
        if built:
            _built(plan, matrix, opts)
        for point in opts.points():
            settings = settings_of(point, own)
            if excluded(matrix.exclude, settings):
                continue
            try:
                check_point(opts, point)
            except UsageError as exc:
                raise _planned(plan, matrix, exc, agent_info, partial(_shown_setting, table, settings)) from None
            ident = point_hash(opts, point, 0)
            if ident in seen:
                continue
            seen.add(ident)
            points.append((opts, point))
    return points
