"""Sweep plans: a YAML file of ``mwperf run`` options, each a value or a list.

Lists expand to the cartesian product of every option (``rate`` only applies
to rate-mode points, ``demand`` and ``burst_gap`` to burst-mode points;
``mw: built`` is every middleware the agent is built with); ``exclude`` rules prune points; ``repetitions`` repeats
each point. Every point is then validated exactly as ``mwperf run`` validates
its options, so a plan accepts what the command line accepts, and an error
names the plan, the offending key and the value::

    plans/mine.yaml: size: 70000: udp carries at most 65507 bytes per message

Exclude rules are mappings whose conditions must all hold:

* ``KEY: VALUE`` or ``KEY: [VALUES]`` for an option (``mw: udp``, ``size: 16MiB``);
* ``size_over`` / ``size_under`` / ``rate_over`` / ``rate_under``: bounds;
* ``offered_gbps_over: G``: rate-mode points offering more than G Gbit/s
  (size x rate).

Each expanded point carries a key (a hash of its effective configuration and
repetition) so that ``mwperf sweep --resume`` runs only the points whose key
is not in results.jsonl yet.
"""

from __future__ import annotations

import dataclasses
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
from mwperf.plan.validate import build_run_options
from mwperf.plan.qos import QosRequest
from mwperf.units import parse_duration_ns, parse_list, parse_rate_hz, parse_size

__all__ = ["Plan", "load_plan", "parse_plan", "expand", "count_points", "check_size", "MAX_POINTS",
           "ENV_MAX_POINTS"]

#: Options a plan may set, in expansion order (outermost first).
OPTION_KEYS = (
    "mw", "transport", "reliability", "history", "durability", "keyed", "instances", "async", "batch", "receive",
    "wait", "cpu", "mode", "size", "rate", "duration", "warmup", "samples", "precision", "confidence",
    "latency_count", "nic", "match_timeout", "point_timeout", "link",
    "demand", "burst_gap", "subscribers", "slow_subscriber", "congestion", "subscribers_as",
)
SWEEP_KEYS = ("exclude", "repetitions", "description")
#: ``mw: built``: every middleware the agent is built with (its description says which).
BUILT = "built"
#: One value even when it has a comma (``cpu: 0,1`` is one placement).
NO_COMMA_SPLIT = {"cpu", "link"}
FLAGS = ("keyed", "async", "batch")
RULE_BOUNDS = {"size_over", "size_under", "rate_over", "rate_under", "offered_gbps_over"}
MAX_REPETITIONS = 1000
#: Options that make points only in some modes (the others drop them).
MODE_ONLY = {"rate": {"rate"}, "latency_count": {"throughput"}, "demand": {"burst"}, "burst_gap": {"burst"}}
#: A sweep of more points is refused unless the limit is raised (--max-points, $MWPERF_MAX_POINTS):
#: at a second a point it runs for hours, at 30 s (rate-matrix.yaml) for days.
MAX_POINTS = 10_000
ENV_MAX_POINTS = "MWPERF_MAX_POINTS"
#: From this many points, the count is printed before the plan is expanded.
ANNOUNCE_POINTS = 1_000
#: A rate point given only a sample count runs at most this much longer than its samples need.
SAMPLES_MARGIN = 1.2
SAMPLES_DEFAULT_MAX_S = 60


@dataclass(frozen=True)
class Plan:
    source: str
    options: Mapping[str, tuple]  # key -> values (each a str, or a bool for flags)
    exclude: tuple[Mapping[str, Any], ...]
    repetitions: int
    description: str | None
    text: str  # the plan as written (saved in the run directory)


def _key_name(key: str) -> str:
    return key.strip().replace("-", "_")


def _values(source: str, key: str, raw: Any) -> tuple:
    """A plan value or list as a tuple of option strings (bools for flags)."""
    items = raw if isinstance(raw, list) else [raw]
    if not items:
        raise PlanError(source, key, None, "empty list")
    out: list = []
    for item in items:
        if isinstance(item, bool):
            if key not in FLAGS:
                raise PlanError(source, key, None, f"{str(item).lower()} is not a value of {key}")
            out.append(item)
        elif isinstance(item, (int, float, str)):
            text = str(item).strip()
            if key in FLAGS:
                raise PlanError(source, key, text, "expected true or false")
            if key in NO_COMMA_SPLIT:
                out.append(text)
            else:
                try:
                    out.extend(parse_list(text))
                except UnitError as exc:
                    raise PlanError(source, key, text, str(exc)) from None
        else:
            raise PlanError(source, key, None, f"{item!r} is not a single value")
    return tuple(dict.fromkeys(out))


def _rule(source: str, index: int, raw: Any) -> dict:
    where = f"exclude[{index}]"
    if not isinstance(raw, dict) or not raw:
        raise PlanError(source, where, None, "expected a mapping of conditions, e.g. {offered_gbps_over: 8}")
    rule: dict[str, Any] = {}
    for key, value in raw.items():
        name = _key_name(str(key))
        if name not in RULE_BOUNDS and name not in OPTION_KEYS:
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


def _normal(key: str, value: Any):
    """A value in the form rules and keys compare: sizes in bytes, rates in Hz."""
    if isinstance(value, bool):
        return value
    text = str(value).strip()
    try:
        if key == "size":
            return parse_size(text)
        if key == "rate":
            return parse_rate_hz(text)
        if key in ("duration", "warmup", "match_timeout", "point_timeout"):
            return parse_duration_ns(text, allow_zero=True)
    except UnitError:
        return text
    return text.lower()


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
    spelled: dict[str, str] = {}
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
                raise PlanError(source, "repetitions", str(value), f"must be a whole number from 1 to {MAX_REPETITIONS}")
            repetitions = value
        elif key == "description":
            if isinstance(value, (dict, list)):
                raise PlanError(source, "description", None, "expected text")
            description = None if value is None else str(value)
        elif key in OPTION_KEYS:
            if value is None:
                raise PlanError(source, str(raw_key), None, "no value")
            options[key] = _values(source, str(raw_key), value)
        else:
            known = ", ".join(OPTION_KEYS + SWEEP_KEYS)
            raise PlanError(source, str(raw_key), None, f"unknown key (known: {known})")
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
    return Plan(source, options, tuple(exclude), repetitions, description, text)


def load_plan(path: str | Path) -> Plan:
    """The plan in file ``path`` (a regular file of at most MAX_PLAN_BYTES), parsed."""
    return parse_plan(read_plan_text(path), str(path))


def count_points(plan: Plan) -> int:
    """How many points the plan expands to before its exclude rules (and before
    settings written twice, as 1k and 1024, are merged): each mode's product of
    its options' list lengths, times the repetitions. Arithmetic only, so a
    plan of any size is counted at once."""
    total = 0
    for mode in plan.options.get("mode", ("latency",)):
        product = 1
        for key, values in plan.options.items():
            if key == "mode" or (key in MODE_ONLY and _normal("mode", mode) not in MODE_ONLY[key]):
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


def _excluded(rules: tuple[Mapping[str, Any], ...], settings: Mapping[str, Any]) -> bool:
    size = _normal("size", settings.get("size", "1k"))
    rate = _normal("rate", settings["rate"]) if settings.get("rate") is not None else None
    for rule in rules:
        hit = True
        for cond, want in rule.items():
            if cond == "size_over":
                hit = isinstance(size, int) and size > want
            elif cond == "size_under":
                hit = isinstance(size, int) and size < want
            elif cond == "rate_over":
                hit = isinstance(rate, float) and rate > want
            elif cond == "rate_under":
                hit = isinstance(rate, float) and rate < want
            elif cond == "offered_gbps_over":
                hit = isinstance(rate, float) and isinstance(size, int) and size * 8 * rate / 1e9 > want
            else:
                hit = cond in settings and _normal(cond, settings[cond]) in want
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
    return name if name in OPTION_KEYS else "mw"


def _point_key(opts: RunOptions, point: TestPoint, repetition: int) -> str:
    q = opts.qos
    config = {
        "mw": point.mw, "mode": point.mode, "size": point.size, "rate_hz": point.rate_hz,
        "transport": point.transport, "reliability": point.reliability, "history": point.history,
        "durability": point.durability, "instances": q.instances, "async": q.async_, "receive": q.receive,
        **({"batch": True} if q.batch else {}),
        "nic": q.nic, "wait": opts.wait, "cpu": str(opts.cpu), "duration_ns": opts.duration_ns,
        "warmup_ns": opts.warmup_ns, "samples": opts.samples, "precision": opts.precision,
        "confidence": opts.confidence, "latency_count": opts.latency_count, "repetition": repetition,
        **({"link": opts.link.name} if opts.link else {}),
        # new keys only where they differ from what every earlier point was (old keys stay valid)
        **({"demand": point.demand, "burst_gap_ns": opts.burst_gap_ns} if point.demand is not None else {}),
        **({"subscribers": point.subscribers} if point.subscribers != 1 else {}),
        **({"slow_ns": opts.slow_ns} if opts.slow_ns else {}),
        **({"congestion": q.congestion} if q.congestion else {}),
        **({"subscribers_as": point.subscribers_as} if point.subscribers_as != "processes" else {}),
    }
    digest = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()
    return digest[:16]


def _sample_duration(settings: Mapping[str, Any]) -> str | None:
    """Maximum duration of a point given a sample count and no duration."""
    if settings.get("samples") is None or settings.get("duration") is not None:
        return None
    if settings.get("mode") == "rate" and settings.get("rate") is not None:
        try:
            samples, rate = int(settings["samples"]), parse_rate_hz(str(settings["rate"]))
        except (ValueError, UnitError):
            return None  # build_run_options names the bad value
        return f"{max(1.0, samples / rate * SAMPLES_MARGIN + 1.0):.3f}s"
    return f"{SAMPLES_DEFAULT_MAX_S}s"


def expand(plan: Plan, *, out: Path, agent: str | None, agent_info: AgentInfo,
           cpu_count: int | None = None, max_points: int | None = None,
           note: Callable[[str], None] | None = _stderr_note) -> list[PlannedPoint]:
    """Every point of the plan, excluded ones removed, each validated; PlanError names the first bad one,
    or a plan of more than ``max_points`` points (:func:`check_size`)."""
    check_size(plan, max_points, note)
    keys = [k for k in OPTION_KEYS if k in plan.options]
    modes = plan.options.get("mode", ("latency",))
    options = dict(plan.options)
    if options.get("mw") == (BUILT,):  # every middleware this agent is built with
        options["mw"] = tuple(agent_info.adapters)
    points: list[PlannedPoint] = []
    seen: set[str] = set()
    for combo in itertools.product(*(options[k] for k in keys)):
        settings = dict(zip(keys, combo))
        settings.setdefault("mode", modes[0])
        if settings["mode"] != "rate":
            settings.pop("rate", None)  # rate only applies to rate-mode points
        elif "rate" not in settings:
            raise PlanError(plan.source, "rate", None, "missing (mode rate needs rate: HZ or a list)")
        if settings["mode"] != "throughput":
            settings.pop("latency_count", None)  # the pings interleaved with flat-out samples
        if settings["mode"] != "burst":
            settings.pop("demand", None)  # demand and gap only apply to burst-mode points
            settings.pop("burst_gap", None)
        elif "demand" not in settings:
            raise PlanError(plan.source, "demand", None, "missing (mode burst needs demand: N or a list)")
        if _excluded(plan.exclude, settings):
            continue
        opts = _point_options(plan, settings, out=out, agent=agent, agent_info=agent_info, cpu_count=cpu_count)
        built = opts.points()
        if len(built) != 1:  # pragma: no cover - every list is expanded here, one value a point
            raise PlanError(plan.source, None, None, f"{dict(settings)}: expands to {len(built)} points, not one")
        point = built[0]
        # The same configuration written twice (1k and 1024, keyed and instances) runs once.
        ident = _point_key(opts, point, 0)
        if ident in seen:
            continue
        seen.add(ident)
        for repetition in range(plan.repetitions):
            index = len(points)
            planned = dataclasses.replace(point, index=index)
            points.append(PlannedPoint(opts, planned, repetition, _point_key(opts, planned, repetition),
                                       plan.repetitions))
    if not points:
        raise PlanError(plan.source, "exclude", None, "every point is excluded")
    return points


def _request(settings: Mapping[str, Any], out: Path) -> RunRequest:
    """One point's settings (one value each) as the run options they set."""
    def one(key: str) -> tuple[str, ...] | None:
        return None if settings.get(key) is None else (settings[key],)

    qos = QosRequest(
        reliabilities=one("reliability"), histories=one("history"), durabilities=one("durability"),
        transports=one("transport"), keyed=bool(settings.get("keyed")) or "instances" in settings,
        instances=settings.get("instances"), async_=bool(settings.get("async")), batch=bool(settings.get("batch")),
        receive=settings.get("receive"), nic=settings.get("nic"), match_timeout=settings.get("match_timeout"),
        congestion=settings.get("congestion"))
    return RunRequest(
        mws=one("mw"), modes=one("mode"), sizes=one("size"), rates=one("rate"),
        duration=settings.get("duration") or _sample_duration(settings), warmup=settings.get("warmup"),
        cpu=settings.get("cpu"), wait=settings.get("wait"), latency_count=settings.get("latency_count"),
        samples=settings.get("samples"), precision=settings.get("precision"), confidence=settings.get("confidence"),
        point_timeout=settings.get("point_timeout"), link=settings.get("link"), demands=one("demand"),
        burst_gap=settings.get("burst_gap"), subscribers=one("subscribers"),
        slow_subscriber=settings.get("slow_subscriber"), subscribers_as=settings.get("subscribers_as"),
        out=str(out), qos=qos)


def _point_options(plan: Plan, settings: Mapping[str, Any], *, out: Path, agent: str | None,
                   agent_info: AgentInfo, cpu_count: int | None) -> RunOptions:
    """The point validated as ``mwperf run`` validates; an error names the plan key it is about."""
    try:
        return build_run_options(_request(settings, out), agent_info, agent=agent, cpu_count=cpu_count,
                                 check_out=False)
    except UsageError as exc:
        key = _plan_key(exc.option)
        hint = ""
        if isinstance(exc, Unsupported):
            rule = f"size_over: {agent_info.adapters[exc.mw].max_size}" if key == "size" else \
                f"{key}: {settings.get(key)}"
            hint = f" (exclude it: {{mw: {exc.mw}, {rule}}})"
        raise PlanError(plan.source, key, exc.value, exc.reason + hint) from None
