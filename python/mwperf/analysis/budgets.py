"""Budgets: declarative limits on recorded figures, checked as a CI gate
(``mwperf check BUDGETS.yaml DIR|--db``).

A budgets file::

    budgets:
      - match: {mw: cyclonedds, mode: latency, size: 1k}   # the points it applies to (all when omitted)
        p99: "<= 2ms"
        loss: "<= 0.1%"
      - match: {mw: [udp, tcp], mode: rate, rate: 1000}
        loop_rate: ">= 0.99"
        rss_kb.sub: "<= 20MiB"
        discovery_ms: "<= 1s"

``match`` names record fields (dotted as in ``mwperf.load``: ``qos.history``,
``cpu.placement``), ``rate`` for ``rate_hz`` and ``host`` for the host the
run was on; a value or a list of values (sizes and rates with units). Every
other key is a figure with a limit ``OP VALUE`` (``<=``, ``<``, ``>=``,
``>``; quote it in YAML, where a leading ``>`` means something else):

* any numeric field of the record (``latency_us.p99``, ``rtt_us.p50``,
  ``loop_rate``, ``samples_per_s``, ``rss_kb.pub``, ``discovery_ms``, ...),
  checked against the results schema, so a misspelt key is refused;
* short names: ``p50``, ``p90``, ``p99``, ``p99.99``, ``p99.9999``, ``mean``,
  ``max`` (of ``latency_us``), ``loss`` (``loss_rate``), ``cpu_pct.pub|sub``
  (CPU % of one core, also for records from before ``cpu_pct``) and
  ``cpu_per_sample.pub|sub`` (CPU µs per sample sent | received).

A value takes the field's unit from its name (``_us``, ``_ms``, ``_s``:
durations such as ``2ms``; ``_kb``: sizes such as ``20MiB``; rates and
fractions: ``0.1%``) or is a plain number in that unit.

Each budget is checked on every matching point, on its launches (a run's
records of the point: its repetitions): it **holds** when the launches show
with 95 % confidence that their median meets the limit, is **violated** when
they show it does not (:func:`mwperf.stats.gates.against_limit`: one-sided
order-statistic bounds; a failed launch violates every budget that matches
it), **cannot decide** when the bounds straddle the limit or there are
fewer launches than a bound needs (5), or is **not measurable**: no launch
has the figure (loop rate in latency mode), or has samples enough for it
(p99.9999 needs 10^6; from 5 000 samples it is not a pass). A budget that
matches no point is reported too. Only "every check holds" passes.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

from mwperf.errors import PlanError, UnitError
from mwperf.model.labels import point_id
from mwperf.model.record import Record
from mwperf.stats.gates import CANNOT_DECIDE, HOLDS, VIOLATED, against_limit
from mwperf.stats.launches import launch_interval
from mwperf.units import parse_duration_ns, parse_rate_hz, parse_size

__all__ = ["Budget", "Check", "load_budgets", "parse_budgets", "evaluate", "matches", "HOLDS", "VIOLATED",
           "NOT_MEASURABLE", "CANNOT_DECIDE", "NO_POINT"]

NOT_MEASURABLE, NO_POINT = "not measurable", "no point matched"
_LIMIT = re.compile(r"^\s*(<=|>=|<|>)\s*(\S.*?)\s*$")
_ALIASES = {"p50": "latency_us.p50", "p90": "latency_us.p90", "p99": "latency_us.p99", "p99.99": "latency_us.p9999",
            "p99.9999": "latency_us.p999999", "mean": "latency_us.mean", "max": "latency_us.max",
            "loss": "loss_rate"}
_PERCENTILE = re.compile(r"(?:^|\.)p(\d+)$")


def _cpu_per_sample(record: Record, side: str) -> float | None:
    used = record.cpu_s.side(side)
    count = record.sent if side == "pub" else record.received
    if used is None or not count:
        return None
    return 1e6 * used.total / count


#: figures computed from a record, not read from it
_DERIVED: dict[str, Callable[[Record], float | None]] = {
    "cpu_pct.pub": lambda r: r.cpu_pct.pub, "cpu_pct.sub": lambda r: r.cpu_pct.sub,
    "cpu_per_sample.pub": lambda r: _cpu_per_sample(r, "pub"),
    "cpu_per_sample.sub": lambda r: _cpu_per_sample(r, "sub")}
_DERIVED_UNITS = {"cpu_pct.pub": "%", "cpu_pct.sub": "%", "cpu_per_sample.pub": "us", "cpu_per_sample.sub": "us"}


@lru_cache(maxsize=1)
def _schema_fields() -> tuple[dict[str, set[str]], tuple[str, ...]]:
    """(dotted field -> JSON types, prefixes under which any key goes) of the results schema."""
    from mwperf.model.schema import load_schema

    schema = load_schema()
    fields: dict[str, set[str]] = {}
    open_prefixes: list[str] = []

    def walk(node: Any, path: str, depth: int = 0) -> None:
        if not isinstance(node, dict) or depth > 12:
            return
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            walk(schema.get("$defs", {}).get(ref[8:]), path, depth + 1)
        for each in node.get("anyOf", []) + node.get("oneOf", []):
            walk(each, path, depth + 1)
        kinds = node.get("type")
        kinds = set(kinds) if isinstance(kinds, list) else ({kinds} if isinstance(kinds, str) else set())
        if path:
            fields.setdefault(path, set()).update(kinds)
        for key, sub in (node.get("properties") or {}).items():
            walk(sub, f"{path}.{key}" if path else key, depth + 1)
        if "object" in kinds and "properties" not in node and path:
            open_prefixes.append(path + ".")

    walk(schema, "")
    return fields, tuple(open_prefixes)


def _known(field: str) -> bool:
    fields, open_prefixes = _schema_fields()
    return field in fields or field.startswith(open_prefixes)


def _numeric(field: str) -> bool:
    fields, _ = _schema_fields()
    return bool(fields.get(field, set()) & {"number", "integer"})


def _unit(field: str) -> str:
    """The unit of a field, from its name: us, ms, s, kb, fraction, % or ''."""
    if field in _DERIVED_UNITS:
        return _DERIVED_UNITS[field]
    for part in reversed(field.split(".")):
        for suffix in ("_us", "_ms", "_kb", "_s"):
            if part.endswith(suffix) and part != "samples_per_s":
                return suffix[1:]
        if part.endswith("_rate"):
            return "fraction"
    return ""


def _value(text: Any, field: str) -> float:
    """A limit's value in the field's unit; UnitError when it cannot be one."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text)
    text = str(text).strip()
    unit = _unit(field)
    try:
        return float(text)
    except ValueError:
        pass
    if unit in ("us", "ms", "s"):
        return parse_duration_ns(text, allow_zero=True) / {"us": 1e3, "ms": 1e6, "s": 1e9}[unit]
    if unit == "kb":
        return parse_size(text) / 1024
    if unit in ("fraction", "%") and text.endswith("%"):
        number = float(text[:-1])
        return number / 100 if unit == "fraction" else number
    said = {"fraction": "percentage", "%": "percentage"}.get(unit, unit)
    raise UnitError(f"not a number{' or a ' + said if unit else ''}")


@dataclass
class Limit:
    name: str  # as written in the file
    field: str
    op: str
    value: float
    text: str


@dataclass
class Budget:
    index: int
    match: dict[str, list]
    limits: list[Limit]

    def describe(self) -> str:
        what = " ".join(f"{k}={','.join(map(str, v))}" for k, v in self.match.items())
        return f"budget {self.index + 1}" + (f" ({what})" if what else "")


def _match_values(key: str, value: Any, source: str, where: str) -> list:
    values = value if isinstance(value, list) else [value]
    out = []
    for each in values:
        if isinstance(each, (dict, list)) or each is None:
            raise PlanError(source, where, str(each), "expected a value or a list of values")
        try:
            if key == "size" and isinstance(each, str):
                each = parse_size(each)
            elif key == "rate_hz" and isinstance(each, str):
                each = parse_rate_hz(each)
        except UnitError as exc:
            raise PlanError(source, where, str(each), str(exc)) from None
        out.append(each)
    return out


def parse_budgets(doc: Any, source: str) -> list[Budget]:
    """The budgets of a parsed file; PlanError naming the key and the value."""
    if not isinstance(doc, dict) or set(doc) != {"budgets"} or not isinstance(doc["budgets"], list):
        raise PlanError(source, None, None, "expected one key, 'budgets:', holding a list of budgets")
    budgets = []
    for i, entry in enumerate(doc["budgets"]):
        where = f"budgets[{i}]"
        if not isinstance(entry, dict):
            raise PlanError(source, where, None, "a budget is a mapping (match: ..., FIGURE: \"<= VALUE\")")
        match: dict[str, list] = {}
        raw = entry.get("match") or {}
        if not isinstance(raw, dict):
            raise PlanError(source, f"{where}.match", str(raw), "expected a mapping of fields to values")
        for key, value in raw.items():
            field = {"rate": "rate_hz"}.get(str(key), str(key))
            if field != "host" and not _known(field):
                raise PlanError(source, f"{where}.match.{key}", str(value), "no such field in a record")
            match[field] = _match_values(field, value, source, f"{where}.match.{key}")
        limits = []
        for name, text in entry.items():
            if name == "match":
                continue
            field = _ALIASES.get(str(name), str(name))
            if field not in _DERIVED and not (_known(field) and _numeric(field)):
                raise PlanError(source, f"{where}.{name}", str(text),
                                "not a numeric figure of a record (p50, p99, loss, cpu_pct.pub, latency_us.p99, "
                                "rss_kb.sub, discovery_ms, ...)")
            found = _LIMIT.match(str(text)) if not isinstance(text, (dict, list)) else None
            if not found:
                raise PlanError(source, f"{where}.{name}", str(text), "expected OP VALUE, e.g. \"<= 2ms\" "
                                                                     "(OP one of <=, <, >=, >)")
            try:
                value = _value(found.group(2), field)
            except (UnitError, ValueError) as exc:
                raise PlanError(source, f"{where}.{name}", str(text), str(exc)) from None
            if not math.isfinite(value):
                raise PlanError(source, f"{where}.{name}", str(text), "not a finite number")
            limits.append(Limit(str(name), field, found.group(1), value, str(text).strip()))
        if not limits:
            raise PlanError(source, where, None, "no figure to check (e.g. p99: \"<= 2ms\")")
        budgets.append(Budget(i, match, limits))
    if not budgets:
        raise PlanError(source, "budgets", None, "empty: no budget to check")
    return budgets


def load_budgets(path: str) -> list[Budget]:
    """The budgets of a file, read as untrusted input (bounded, no YAML aliases)."""
    from mwperf.plan.plan_file import load_yaml, read_plan_text

    return parse_budgets(load_yaml(read_plan_text(path), str(path)), str(path))


def _needed(field: str) -> int:
    """Samples a percentile needs (q needs n >= 1 / (1 - q)); 1 for anything else."""
    found = _PERCENTILE.search(field)
    if not found:
        return 1
    q = int(found.group(1)) / 10 ** len(found.group(1))
    return math.ceil(1 / (1 - q) - 1e-9)


@dataclass
class Check:
    budget: Budget
    limit: Limit | None
    record: Record | None  # the point's first launch
    verdict: str
    value: float | None = None  # the launches' median
    note: str = ""
    launches: int = 0


def matches(budget: Budget, record: Record, host: str | None) -> bool:
    """Whether a budget applies to a record (of a run on ``host``)."""
    for field, values in budget.match.items():
        have = host if field == "host" else record.field(field)
        if not any(have == v or (isinstance(v, str) and str(have) == v) for v in values):
            return False
    return True


def _figure(limit: Limit, record: Record) -> tuple[float | None, str | None]:
    """A launch's figure, or why it has none."""
    value = _DERIVED[limit.field](record) if limit.field in _DERIVED else record.field(limit.field)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None, f"the point has no {limit.name}"
    needed = _needed(limit.field)
    if needed > 1:
        stats = record.field(limit.field.rsplit(".", 1)[0]) if "." in limit.field else None
        count = stats.get("count") if isinstance(stats, dict) else None
        if not isinstance(count, int) or count < needed:
            return None, f"{count if count is not None else 'unknown'} samples; {limit.name} needs {needed:,}"
    return float(value), None


def _check(budget: Budget, limit: Limit, launches: list[Record]) -> Check:
    first = launches[0]
    failed = [r for r in launches if not r.ok]
    if failed:
        return Check(budget, limit, first, VIOLATED, note=f"the point failed: {failed[0].error or '?'}",
                     launches=len(launches))
    figures = [_figure(limit, r) for r in launches]
    values = [v for v, _ in figures if v is not None]
    if not values:
        return Check(budget, limit, first, NOT_MEASURABLE, note=figures[0][1] or "", launches=len(launches))
    decided = against_limit(values, limit.op, limit.value)
    note = decided.why
    if decided.worse is not None and decided.verdict != HOLDS:
        note = (note + "; " if note else "") + f"95 % bounds of the launches' median: {decided.better:.4g} .. " \
                                               f"{decided.worse:.4g}"
    return Check(budget, limit, first, decided.verdict, launch_interval(values).estimate, note, len(values))


def _launches(points: list[tuple[Record, str | None]]) -> list[tuple[list[Record], str | None]]:
    """The records grouped into points, a group a point of a run (its launches), in order."""
    groups: dict[tuple, tuple[list[Record], str | None]] = {}
    for record, host in points:
        groups.setdefault((record.run_id, host, point_id(record)), ([], host))[0].append(record)
    return list(groups.values())


def evaluate(budgets: list[Budget], points: list[tuple[Record, str | None]]) -> list[Check]:
    """Every check of every budget on the points (records of launches, and their host) it matches."""
    checks = []
    grouped = _launches(points)
    for budget in budgets:
        mine = [(rs, h) for rs, h in grouped if matches(budget, rs[0], h)]
        if not mine:
            checks.append(Check(budget, None, None, NO_POINT, note="no point matches this budget"))
        for launches, _ in mine:
            checks.extend(_check(budget, limit, launches) for limit in budget.limits)
    return checks
