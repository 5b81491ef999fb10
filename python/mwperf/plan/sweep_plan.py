"""Sweep plans: a YAML file of ``mwperf run`` options, each a value or a list.

The keys are the options of the agent's table (``latency_count`` for
``--latency-count``) and the controller's own (``cpu``, ``link``,
``point_timeout``, ``keyed``). Lists expand to the product of every option
that applies to a point's mode (``rate`` only to rate points, ``demand`` and
``burst_gap`` to burst points: the table says which), so a plan expands to
as many points as it yields; a key that applies to no point of the plan is
an error, not dropped. ``mw: built`` is every middleware the agent is built
with; ``exclude`` rules prune points; ``repetitions`` repeats each point.
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

import dataclasses
from functools import partial
import hashlib
import itertools
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from mwperf.description import AgentInfo
from mwperf.display import shown
from mwperf.errors import PlanError, UnitError, Unsupported, UsageError
from mwperf.plan.options import PlannedPoint, RunOptions, RunRequest, TestPoint
from mwperf.plan.plan_file import load_yaml, read_plan_text
from mwperf.plan.validate import build_run_options, check_point
from mwperf.table import OptionTable, snapshot
from mwperf.units import parse_list, parse_rate_hz, parse_size

__all__ = ["Plan", "load_plan", "parse_plan", "expand", "count_points", "check_size", "point_hash", "option_keys",
           "MAX_POINTS", "ENV_MAX_POINTS"]

#: The controller's own plan keys (each a value or a list, as the options of the table).
CONTROLLER_KEYS = ("cpu", "link", "point_timeout", "keyed", "reuse_agents")
SWEEP_KEYS = ("exclude", "repetitions", "description", "search")
#: A max-rate plan's ``search`` keys (``mwperf max-rate``'s options of the same names).
SEARCH_KEYS = ("loss", "p99", "step", "bounds")
#: ``mw: built``: every middleware the agent is built with (its description says which).
BUILT = "built"
#: One value even when it has a comma (``cpu: 0,1`` is one placement).
NO_COMMA_SPLIT = {"cpu", "link"}
RULE_BOUNDS = {"size_over", "size_under", "rate_over", "rate_under", "offered_gbps_over"}
MAX_REPETITIONS = 1000
#: A sweep of more points is refused unless the limit is raised (--max-points, $MWPERF_MAX_POINTS):
#: at a second a point it runs for hours, at 30 s (rate-matrix.yaml) for days.
MAX_POINTS = 10_000
ENV_MAX_POINTS = "MWPERF_MAX_POINTS"
#: From this many points, the count is printed before the plan is expanded.
ANNOUNCE_POINTS = 1_000


def option_keys(table: OptionTable | None = None) -> tuple[str, ...]:
    """Every key a plan may set: the table's options of ``mwperf run``, then the controller's."""
    return tuple(r.key for r in (table or snapshot()).user_rows) + CONTROLLER_KEYS


def _flag(key: str) -> bool:
    row = snapshot().by_key(key)
    return key == "keyed" or (row is not None and row.kind == "flag")


@dataclass(frozen=True)
class Plan:
    source: str
    options: Mapping[str, tuple]  # key -> values (each a str, or a bool for flags)
    exclude: tuple[Mapping[str, Any], ...]
    repetitions: int
    description: str | None
    text: str  # the plan as written (saved in the run directory)
    search: Mapping[str, str] | None = None  # a max-rate plan's criterion, as written


def _key_name(key: str) -> str:
    return key.strip().replace("-", "_")


def _values(source: str, key: str, raw: Any) -> tuple:
    """A plan value or list as a tuple of option strings (bools for flags)."""
    items = raw if isinstance(raw, list) else [raw]
    if not items:
        raise PlanError(source, key, None, "empty list")
    flag = _flag(_key_name(key))
    out: list = []
    for item in items:
        if isinstance(item, bool):
            if not flag:
                raise PlanError(source, key, None, f"{str(item).lower()} is not a value of {key}")
            out.append(item)
        elif isinstance(item, (int, float, str)):
            text = str(item).strip()
            if flag:
                raise PlanError(source, key, text, "expected true or false")
            if _key_name(key) in NO_COMMA_SPLIT:
                out.append(text)
            else:
                try:
                    out.extend(parse_list(text))
                except UnitError as exc:
                    raise PlanError(source, key, text, str(exc)) from None
        else:
            raise PlanError(source, key, None, f"{item!r} is not a single value")
    return tuple(dict.fromkeys(out))


def _normal(key: str, value: Any) -> Any:
    """A value in the form rules and points compare: machine values for the table's options."""
    row = snapshot().by_key(key)
    if isinstance(value, bool) or row is None:
        return value if isinstance(value, bool) else str(value).strip().lower()
    try:
        return row.parse(value)
    except ValueError:
        return str(value).strip().lower()


def _rule(source: str, index: int, raw: Any) -> dict:
    where = f"exclude[{index}]"
    if not isinstance(raw, dict) or not raw:
        raise PlanError(source, where, None, "expected a mapping of conditions, e.g. {offered_gbps_over: 8}")
    rule: dict[str, Any] = {}
    for key, value in raw.items():
        name = _key_name(str(key))
        if name not in RULE_BOUNDS and name not in option_keys():
            raise PlanError(source, f"{where}.{key}", None, f"unknown condition (use an option name, "
                                                            f"{', '.join(sorted(RULE_BOUNDS))})")
        try:
            if name in ("size_over", "size_under"):
                rule[name] = parse_size(str(value))
            elif name in ("rate_over", "rate_under"):
                rule[name] = parse_rate_hz(str(value))
            elif name == "offered_gbps_over":
                rule[name] = float(value)
                if rule[name] < 0:
                    raise ValueError
            else:
                rule[name] = {_normal(name, v) for v in _values(source, name, value)}
        except (UnitError, ValueError, TypeError) as exc:
            detail = f": {exc}" if isinstance(exc, UnitError) else ""
            raise PlanError(source, f"{where}.{key}", str(value), f"not a valid bound{detail}") from None
    return rule


def parse_plan(text: str, source: str = "plan") -> Plan:
    """Check the plan's structure and keys (not yet the values: see :func:`expand`).
    The YAML is read bounded (:mod:`mwperf.plan.plan_file`: no aliases, no key twice)."""
    data = load_yaml(text, source)
    if not isinstance(data, dict):
        raise PlanError(source, None, None, "expected a mapping of mwperf run options (mw: ..., size: ...)")
    options: dict[str, tuple] = {}
    exclude: list[dict] = []
    repetitions = 1
    description = None
    search = None
    spelled: dict[str, str] = {}
    keys = option_keys()
    for raw_key, value in data.items():
        key = _key_name(str(raw_key))
        if key in spelled:  # match-timeout and match_timeout are one key
            raise PlanError(source, str(raw_key), None, f"the same key as {spelled[key]}: keep one")
        spelled[key] = str(raw_key)
        if key == "exclude":
            rules = value if isinstance(value, list) else [value]
            exclude = [_rule(source, i, r) for i, r in enumerate(rules)]
        elif key == "repetitions":
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_REPETITIONS:
                raise PlanError(source, "repetitions", str(value),
                                f"must be a whole number from 1 to {MAX_REPETITIONS}")
            repetitions = value
        elif key == "search":
            search = _search(source, value)
        elif key == "description":
            if isinstance(value, (dict, list)):
                raise PlanError(source, "description", None, "expected text")
            description = None if value is None else str(value)
        elif key in keys:
            if value is None:
                raise PlanError(source, str(raw_key), None, "no value")
            options[key] = _values(source, str(raw_key), value)
        else:
            raise PlanError(source, str(raw_key), None, f"unknown key (known: {', '.join(keys + SWEEP_KEYS)})")
    if "mw" not in options:
        raise PlanError(source, "mw", None, "missing (the middlewares to sweep, e.g. mw: [cyclonedds, fastdds])")
    for index, rule in enumerate(exclude):
        for cond, wanted in rule.items():
            if cond in RULE_BOUNDS:
                continue
            planned = {_normal(cond, v) for v in options.get(cond, ())}
            unknown = sorted(map(str, wanted - planned)) if cond in options else []
            if cond not in options or unknown:
                have = ", ".join(map(str, options.get(cond, ()))) or "not set in this plan"
                raise PlanError(source, f"exclude[{index}].{cond}", ", ".join(unknown) or "this key",
                                f"not among the plan's values ({have})")
    return Plan(source, options, tuple(exclude), repetitions, description, text, search)


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
    for mode in plan.options.get("mode", (table["mode"].default,)):
        product = 1
        for key, values in plan.options.items():
            row = table.by_key(key)
            if key == "mode" or (row is not None and not row.applies(_normal("mode", mode))):
                continue
            product *= len(values)
        total += product
    return total * plan.repetitions


def max_points_default() -> int:
    """The point limit: $MWPERF_MAX_POINTS when set (UsageError when it is no whole number), else MAX_POINTS."""
    text = os.environ.get(ENV_MAX_POINTS, "").strip()
    if not text:
        return MAX_POINTS
    if not (text.isascii() and text.isdigit() and int(text) > 0):
        raise UsageError(f"{ENV_MAX_POINTS}={shown(text, 40)}", None, "must be a whole number of points, 1 or more")
    return int(text)


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


def _settings(point: TestPoint, own: Mapping[str, Any]) -> dict[str, Any]:
    """A point as exclude rules see it: plan key -> machine value (the controller's as written)."""
    settings = {"mw": point.mw, "mode": point.mode, **own}
    settings.update((name.replace("-", "_"), value) for name, value in point.values if value is not None)
    return settings


def _excluded(rules: tuple[Mapping[str, Any], ...], settings: Mapping[str, Any]) -> bool:
    size, rate = settings.get("size"), settings.get("rate")
    for rule in rules:
        hit = True
        for cond, want in rule.items():
            if cond == "size_over":
                hit = size is not None and size > want
            elif cond == "size_under":
                hit = size is not None and size < want
            elif cond == "rate_over":
                hit = rate is not None and rate > want
            elif cond == "rate_under":
                hit = rate is not None and rate < want
            elif cond == "offered_gbps_over":
                hit = rate is not None and size is not None and size * 8 * rate / 1e9 > want
            else:
                hit = cond in settings and _normal(cond, settings[cond]) in want if cond in CONTROLLER_KEYS \
                    else (settings[cond] if cond in settings else _normal(cond, "default")) in want
                # (a point at its default has no value of its own: a rule naming `default` is about it)
            if not hit:
                break
        if hit:
            return True
    return False


def _plan_key(option: str | None) -> str:
    """The plan key a run option is set by; an option a plan cannot set
    (``--out``) is about the point as a whole, named by its middleware."""
    name = _key_name(option[2:]) if option and option.startswith("--") else None
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


def _planned(plan: Plan, error: UsageError, agent_info: AgentInfo, value_of: Callable[[str], Any]) -> PlanError:
    """A run option's error as the plan's: the key it is about, and how to exclude it."""
    key = _plan_key(error.option)
    hint = ""
    if isinstance(error, Unsupported):
        rule = f"size_over: {agent_info.adapters[error.mw].max_size}" if key == "size" else f"{key}: {value_of(key)}"
        hint = f" (exclude it: {{mw: {error.mw}, {rule}}})"
    return PlanError(plan.source, key, error.value, error.reason + hint)


def expand(plan: Plan, *, out: Path, agent: str | None, agent_info: AgentInfo,
           cpu_count: int | None = None, max_points: int | None = None,
           note: Callable[[str], None] | None = _stderr_note, hosts: str | None = None) -> list[PlannedPoint]:
    """Every point of the plan, excluded ones removed, each validated; PlanError names the first bad one,
    or a plan of more than ``max_points`` points (:func:`check_size`). ``hosts``: the points run between
    two hosts (``pub=USER@HOST,sub=USER@HOST``, as --hosts), validated as such."""
    check_size(plan, max_points, note)
    table = agent_info.table
    options = dict(plan.options)
    if options.get("mw") == (BUILT,):  # every middleware this agent is built with
        options["mw"] = tuple(agent_info.adapters)
    own_keys = [k for k in CONTROLLER_KEYS if k in options]
    points: list[PlannedPoint] = []
    seen: set[str] = set()
    for combo in itertools.product(*(options[k] for k in own_keys)):
        own = dict(zip(own_keys, combo))
        table_options = {k: v for k, v in options.items() if k not in CONTROLLER_KEYS}
        try:
            opts = build_run_options(_request(table_options, own, out, table, hosts), agent_info, agent=agent,
                                     cpu_count=cpu_count, check_out=False, check_points=False)
        except UsageError as exc:
            raise _planned(plan, exc, agent_info, lambda key: ",".join(map(str, options.get(key, ())))) from None
        for point in opts.points():
            settings = _settings(point, own)
            if _excluded(plan.exclude, settings):
                continue
            try:
                check_point(opts, point)
            except UsageError as exc:
                raise _planned(plan, exc, agent_info, partial(_shown_setting, table, settings)) from None
            # The same configuration written twice (1k and 1024, keyed and instances) runs once.
            ident = point_hash(opts, point, 0)
            if ident in seen:
                continue
            seen.add(ident)
            for repetition in range(plan.repetitions):
                planned = dataclasses.replace(point, index=len(points))
                points.append(PlannedPoint(opts, planned, repetition, point_hash(opts, planned, repetition),
                                           plan.repetitions))
    if not points:
        raise PlanError(plan.source, "exclude", None, "every point is excluded")
    return points
