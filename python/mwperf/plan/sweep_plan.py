"""Sweep plans: a YAML file of ``mwperf run`` options, each a value or a list.

Lists expand to the cartesian product of every option (``rate`` only applies
to rate-mode points); ``exclude`` rules prune points; ``repetitions`` repeats
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

import hashlib
import itertools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import yaml

from mwperf.agent import AdapterInfo, AgentInfo
from mwperf.options import RunOptions, TestPoint, UsageError, build_run_options
from mwperf.units import UnitError, parse_duration_ns, parse_list, parse_rate_hz, parse_size

__all__ = ["PlanError", "PlannedPoint", "Plan", "load_plan", "parse_plan", "expand"]

#: Options a plan may set, in expansion order (outermost first), with the
#: build_run_options / parse_qos argument each one feeds.
OPTION_KEYS = (
    "mw", "transport", "reliability", "history", "durability", "keyed", "instances", "async", "batch", "receive",
    "wait", "cpu", "mode", "size", "rate", "duration", "warmup", "samples", "precision", "confidence",
    "latency_count", "nic", "match_timeout", "point_timeout", "link",
)
QOS_KEYS = {"reliability", "history", "durability", "keyed", "instances", "async", "batch", "receive", "transport", "nic",
            "match_timeout"}
SWEEP_KEYS = ("exclude", "repetitions", "description")
#: One value even when it has a comma (``cpu: 0,1`` is one placement).
NO_COMMA_SPLIT = {"cpu", "link"}
FLAGS = ("keyed", "async", "batch")
RULE_BOUNDS = {"size_over", "size_under", "rate_over", "rate_under", "offered_gbps_over"}
MAX_REPETITIONS = 1000
#: A rate point given only a sample count runs at most this much longer than its samples need.
SAMPLES_MARGIN = 1.2
SAMPLES_DEFAULT_MAX_S = 60


class PlanError(ValueError):
    """A bad plan; the message is one line naming the plan, the key and the value."""


@dataclass(frozen=True)
class PlannedPoint:
    """One point of a sweep: its options (one point's worth), repetition and key."""

    opts: RunOptions
    point: TestPoint
    repetition: int
    key: str
    repetitions: int = 1


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
        raise PlanError(f"{source}: {key}: empty list")
    out: list = []
    for item in items:
        if isinstance(item, bool):
            if key not in FLAGS:
                raise PlanError(f"{source}: {key}: {str(item).lower()} is not a value of {key}")
            out.append(item)
        elif isinstance(item, (int, float, str)):
            text = str(item).strip()
            if key in FLAGS:
                raise PlanError(f"{source}: {key}: {text}: expected true or false")
            if key in NO_COMMA_SPLIT:
                out.append(text)
            else:
                try:
                    out.extend(parse_list(text))
                except UnitError as exc:
                    raise PlanError(f"{source}: {key}: {text}: {exc}") from None
        else:
            raise PlanError(f"{source}: {key}: {item!r} is not a single value")
    return tuple(dict.fromkeys(out))


def _rule(source: str, index: int, raw: Any) -> dict:
    where = f"{source}: exclude[{index}]"
    if not isinstance(raw, dict) or not raw:
        raise PlanError(f"{where}: expected a mapping of conditions, e.g. {{offered_gbps_over: 8}}")
    rule: dict[str, Any] = {}
    for key, value in raw.items():
        name = _key_name(str(key))
        if name not in RULE_BOUNDS and name not in OPTION_KEYS:
            raise PlanError(f"{where}.{key}: unknown condition (use an option name, "
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
            raise PlanError(f"{where}.{key}: {value}: not a valid bound{detail}") from None
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
    """Check the plan's structure and keys (not yet the values: see :func:`expand`)."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise PlanError(f"{source}: not valid YAML{where}: {getattr(exc, 'problem', None) or exc}") from None
    if not isinstance(data, dict):
        raise PlanError(f"{source}: expected a mapping of mwperf run options (mw: ..., size: ...)")
    options: dict[str, tuple] = {}
    exclude: list[dict] = []
    repetitions = 1
    description = None
    for raw_key, value in data.items():
        key = _key_name(str(raw_key))
        if key == "exclude":
            rules = value if isinstance(value, list) else [value]
            exclude = [_rule(source, i, r) for i, r in enumerate(rules)]
        elif key == "repetitions":
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_REPETITIONS:
                raise PlanError(f"{source}: repetitions: {value}: must be a whole number from 1 to {MAX_REPETITIONS}")
            repetitions = value
        elif key == "description":
            description = str(value)
        elif key in OPTION_KEYS:
            if value is None:
                raise PlanError(f"{source}: {raw_key}: no value")
            options[key] = _values(source, str(raw_key), value)
        else:
            known = ", ".join(OPTION_KEYS + SWEEP_KEYS)
            raise PlanError(f"{source}: {raw_key}: unknown key (known: {known})")
    if "mw" not in options:
        raise PlanError(f"{source}: mw: missing (the middlewares to sweep, e.g. mw: [cyclonedds, fastdds])")
    for index, rule in enumerate(exclude):
        for cond, wanted in rule.items():
            if cond in RULE_BOUNDS:
                continue
            planned = {_normal(cond, v) for v in options.get(cond, ())}
            unknown = sorted(map(str, wanted - planned)) if cond in options else []
            if cond not in options or unknown:
                have = ", ".join(map(str, options.get(cond, ()))) or "not set in this plan"
                raise PlanError(f"{source}: exclude[{index}].{cond}: {', '.join(unknown) or 'this key'}: "
                                f"not among the plan's values ({have})")
    return Plan(source, options, tuple(exclude), repetitions, description, text)


def load_plan(path: str | Path) -> Plan:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise PlanError(f"{path}: cannot read the plan: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise PlanError(f"{path}: not a text (UTF-8) file") from None
    return parse_plan(text, str(path))


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


def _option_key(message: str, settings: Mapping[str, Any]) -> str:
    """The plan key a run-option error is about (its message starts with --option)."""
    if message.startswith("--"):
        name = _key_name(message[2:].split(None, 1)[0].rstrip(":"))
        if name == "best":
            return "reliability"
        if name in OPTION_KEYS:
            return name
    return "mw" if "mw" in settings else "plan"


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
           cpu_count: int | None = None) -> list[PlannedPoint]:
    """Every point of the plan, excluded ones removed, each validated; PlanError names the first bad one."""
    keys = [k for k in OPTION_KEYS if k in plan.options]
    modes = plan.options.get("mode", ("latency",))
    points: list[PlannedPoint] = []
    seen: set[str] = set()
    for combo in itertools.product(*(plan.options[k] for k in keys)):
        settings = dict(zip(keys, combo))
        settings.setdefault("mode", modes[0])
        if settings["mode"] != "rate":
            settings.pop("rate", None)  # rate only applies to rate-mode points
        elif "rate" not in settings:
            raise PlanError(f"{plan.source}: rate: missing (mode rate needs rate: HZ or a list)")
        if settings["mode"] != "throughput":
            settings.pop("latency_count", None)  # the pings interleaved with flat-out samples
        if _excluded(plan.exclude, settings):
            continue
        opts = _point_options(plan, settings, out=out, agent=agent, agent_info=agent_info, cpu_count=cpu_count)
        built = opts.points()
        if len(built) != 1:  # pragma: no cover - every list is expanded here, one value a point
            raise PlanError(f"{plan.source}: {dict(settings)}: expands to {len(built)} points, not one")
        point = built[0]
        # The same configuration written twice (1k and 1024, keyed and instances) runs once.
        ident = _point_key(opts, point, 0)
        if ident in seen:
            continue
        seen.add(ident)
        for repetition in range(plan.repetitions):
            index = len(points)
            planned = TestPoint(index, point.mw, point.mode, point.size, point.rate_hz, point.transport,
                                point.reliability, point.history, point.durability)
            points.append(PlannedPoint(opts, planned, repetition, _point_key(opts, planned, repetition),
                                       plan.repetitions))
    if not points:
        raise PlanError(f"{plan.source}: exclude: every point is excluded")
    return points


def _point_options(plan: Plan, settings: Mapping[str, Any], *, out: Path, agent: str | None,
                   agent_info: AgentInfo, cpu_count: int | None) -> RunOptions:
    def text(key: str) -> str | None:
        value = settings.get(key)
        return None if value is None else str(value)

    qos: dict[str, Any] = {k: text(k) for k in QOS_KEYS if k in settings and k not in FLAGS}
    qos["batch"] = bool(settings.get("batch"))
    qos["keyed"] = bool(settings.get("keyed")) or "instances" in settings
    qos["async_"] = bool(settings.get("async"))
    try:
        return build_run_options(
            mw=text("mw"), mode=text("mode"), size=text("size"), rate=text("rate"),
            duration=text("duration") or _sample_duration(settings), warmup=text("warmup"), cpu=text("cpu"),
            wait=text("wait"), latency_count=text("latency_count"), out=str(out), point_timeout=text("point_timeout"),
            agent=agent, agent_info=agent_info, cpu_count=cpu_count, qos=qos, samples=text("samples"),
            precision=text("precision"), confidence=text("confidence"), link=text("link"), check_out=False,
        )
    except UsageError as exc:
        message = str(exc)
        key = _option_key(message, settings)
        detail = message.split(" ", 1)[1] if message.startswith("--") and " " in message else message
        hint = ""
        if "carries at most" in message:
            hint = f" (exclude it: {{mw: {settings.get('mw')}, size_over: {agent_info.adapters[settings['mw']].max_size}}})"
        elif "not supported by" in message:
            hint = f" (exclude it: {{mw: {settings.get('mw')}, {key}: {settings.get(key)}}})"
        raise PlanError(f"{plan.source}: {key}: {detail}{hint}") from None
