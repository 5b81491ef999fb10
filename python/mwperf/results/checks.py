"""What every set of records obeys, checked by the one loader
(:func:`mwperf.results.reading.read_records`) and by the store's readers
(:mod:`mwperf.store.query`), so that no reader shows a forged number as a
measurement (issue 45: a record copied six times passed as six launches; a
negative p50, a loss above 1, more received than sent were printed).

**A measured record's invariants** (:func:`record_problem`): counts are not
negative and, for an ok point, ``received <= sent + duplicates`` (each
subscriber's too: a point whose subscriber took more is failed, saying so,
:mod:`mwperf.execute.delivery`), ``0
<= loss_rate <= 1`` and ``lost >= 0``; a statistics object's figures are in
order (``min <= p50 <= p90 <= p99 <= p999 <= p9999 <= p999999 <= max``, its
mean between min and max, its standard deviation not negative, each
interval's low end not above its high end) and not negative, but for one-way
latencies between two clocks (a record whose ``clock`` says they differ, and
``latency_raw_us`` always: a clock offset makes them so); a samples file
holds exactly the count its record says (8 bytes each), no more than the
statistics it came from counted.

**A launch's identity** (:func:`launch_key`): the run id, the point's index
and hash (``point_key``), its ``repetition``, and the ``launch_id`` the
controller gives each launch when it starts its agents (a random 64-bit
number, 16 hex digits; records written before it was added have none). A run
directory holding one launch twice (the same index, the same launch id, or
the same hash and repetition) is **refused**, not de-duplicated: a copy is
either a forgery or a bug, and which of two copies is the truth cannot be
told. **The launches of one point** (the same point as ``compare`` matches
it, on one link and placement) agree on everything but what they measured:
the options, the adapter and its versions, the CPU placement, the link, the
host pair, the security level; one that differs is refused, with the point
named.

Every refusal is :class:`mwperf.errors.Refused` (bad input, exit 2), one line
naming the run directory, the point (its index, label and launch) and the
field.
"""

from __future__ import annotations

import math
import os
import stat
from typing import Any, Iterable

from mwperf.display import shown
from mwperf.errors import Refused
from mwperf.model.labels import point_id
from mwperf.model.parts import Stats
from mwperf.model.record import STATS_FIELDS, Record

__all__ = ["record_problem", "run_problem", "check_records", "launch_key", "point_named"]

#: The percentiles in the order they must keep.
_ORDER = ("min", "p50", "p90", "p99", "p999", "p9999", "p999999", "max")
#: Slack on "between min and max" for a mean: the agent's min and max are whole nanoseconds, its mean is
#: not (one sample of 91308.5 ns reads mean 91.3085, min and max 91.308 us); 1 ns, and a relative 1e-9.
_SLACK_US, _SLACK = 0.001, 1e-9


def point_named(r: Record) -> str:
    """``point 3 (udp latency 64 B (best-effort, udp)), launch 2``, as a refusal names it."""
    try:
        label = point_id(r).label
    except (TypeError, ValueError, AttributeError):  # pragma: no cover - a record the schema let through
        label = f"{r.mw} {r.mode}"
    launch = "" if r.repetition is None else f", launch {r.repetition + 1}"
    return f"point {r.point} ({shown(label, 120)}){launch}"


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _stats_problem(name: str, stats: Stats | None, signed: bool) -> str | None:
    """Why a statistics object is no measurement (its field named), None when it may be one."""
    if stats is None:
        return None
    figures = {key: stats.figure(key) for key in (*_ORDER, "mean", "std")}
    for key, value in figures.items():
        if value is not None and not (_number(value) and math.isfinite(value)):
            return f"{name}.{key} {value!r}: not a finite number"
        if value is not None and value < 0 and not signed and key != "std":
            return f"{name}.{key} {value:g}: negative, and no latency on one clock is"
    if figures["std"] is not None and figures["std"] < 0:
        return f"{name}.std {figures['std']:g}: a standard deviation is never negative"
    present: list[tuple[str, float]] = [(key, value) for key in _ORDER if (value := figures[key]) is not None]
    for (a, va), (b, vb) in zip(present, present[1:]):
        if vb < va:
            return f"{name}.{b} {vb:g} below {name}.{a} {va:g}: percentiles never decrease"
    low, high, mean = figures["min"], figures["max"], figures["mean"]
    if mean is not None and low is not None and high is not None:
        slack = _SLACK_US + _SLACK * max(abs(low), abs(high))
        if not low - slack <= mean <= high + slack:
            return f"{name}.mean {mean:g} outside [{low:g}, {high:g}] (min, max)"
    for key in ("p50_ci", "p99_ci", "p999_ci"):
        interval = getattr(stats, key)
        if interval is not None and len(interval) == 2 and all(_number(v) for v in interval) \
                and interval[0] > interval[1]:
            return f"{name}.{key} [{interval[0]:g}, {interval[1]:g}]: its low end above its high end"
    return None


def _counts_problem(where: str, sent: Any, received: Any, duplicates: Any, lost: Any, loss_rate: Any,
                    ok: bool = True) -> str | None:
    for key, value in (("sent", sent), ("received", received), ("duplicates", duplicates)):
        if value is not None and (not _number(value) or value < 0):
            return f"{where}{key} {value}: a count is never negative"
    if not ok and _number(sent) and _number(received) and received > sent + (duplicates or 0):
        return None  # failed for it (foreign messages): its loss is negative, as it says
    if lost is not None and _number(lost) and lost < 0:
        return f"{where}lost {lost}: negative"
    if loss_rate is not None and not (_number(loss_rate) and math.isfinite(loss_rate) and 0 <= loss_rate <= 1):
        return f"{where}loss_rate {loss_rate}: a loss rate is from 0 to 1"
    if _number(sent) and _number(received) and received > sent + (duplicates or 0):
        return f"{where}received {received} above sent {sent} + duplicates {duplicates or 0}"
    return None


def record_problem(r: Record, directory: str | None = None) -> str | None:
    """Why a record is no measurement (the field named), None when it may be one. ``directory``: the run
    directory, whose samples file is checked against the record's count."""
    problem = _counts_problem("", r.sent, r.received, r.duplicates, r.lost, r.loss_rate, r.ok)
    if problem:
        return problem
    two_clocks = r.clock is not None and not r.clock.same_clock
    for name in STATS_FIELDS:
        signed = name == "latency_raw_us" or (two_clocks and name in ("latency_us", "burst_first_us", "burst_last_us"))
        problem = _stats_problem(name, r.stats(name), signed)
        if problem:
            return problem
    subscribers = r.json.get("per_subscriber")
    for i, j in enumerate(subscribers if isinstance(subscribers, list) else ()):
        j = j if isinstance(j, dict) else {}
        problem = _counts_problem(f"per_subscriber[{i}].", r.sent, j.get("received"), j.get("duplicates"),
                                  j.get("lost"), j.get("loss_rate"), r.ok) or \
            _stats_problem(f"per_subscriber[{i}].latency_us", Stats.of(j.get("latency_us")), two_clocks)
        if problem:
            return problem
    return _samples_problem(r, directory) if directory is not None else None


def _samples_problem(r: Record, directory: str) -> str | None:
    info = r.samples_file
    if info is None:
        return None
    counted = [s.count for s in (r.latency_us, r.rtt_us, r.latency_raw_us) if s is not None and s.count is not None]
    if counted and info.count > max(counted):
        return f"samples_file.count {info.count} above the {max(counted)} samples its statistics counted"
    try:
        st = os.lstat(os.path.join(directory, info.path))
    except OSError:
        return None  # gone (a run dir copied without samples/): the record's figures stand on their own
    if not stat.S_ISREG(st.st_mode):
        return None  # never read (reading.open_inside): a link, a FIFO, a device
    size = st.st_size
    if size != info.count * 8:
        return f"samples_file.count {info.count}: {info.path} holds {size} bytes, not {info.count * 8}"
    return None


def launch_key(r: Record) -> tuple:
    """A launch's identity: (run id, point index, point hash, repetition, launch id)."""
    return r.run_id, r.point, r.point_hash, r.repetition, r.json.get("launch_id")


def _conditions(r: Record) -> dict[str, Any]:
    """What the launches of one point share: everything but what they measured (None: not known)."""
    security = r.security
    return {
        "options": dict(r.options),
        "adapter.name": r.adapter.name,
        "adapter.version": r.adapter.version,
        "adapter.versions": dict(r.adapter.versions) if r.adapter.versions else None,
        "cpu.placement": r.cpu.placement, "cpu.pub": r.cpu.pub, "cpu.sub": r.cpu.sub,
        "link": r.json.get("link"),
        "host_pair": r.host_pair,
        "security.level": None if security is None else getattr(security, "level", None),
        "source": r.json.get("source"),
        "schema_version": r.schema_version,
    }




def _point_group(r: Record) -> tuple:
    """Which point a launch is of, within a run: the point compare matches, on its link and placement."""
    link = r.json.get("link")
    where = None if not isinstance(link, dict) else tuple(sorted((k, str(v)) for k, v in link.items()))
    return r.run_id, point_id(r), where, r.placement


def _differs(a: Any, b: Any) -> bool:
    return a is not None and b is not None and a != b


def run_problem(records: Iterable[Record]) -> tuple[Record, str] | None:
    """(the record, why) of the first launch repeated or disagreeing with the launches of its point before
    it; None when there is none."""
    by_index: dict[tuple, Record] = {}
    by_id: dict[str, Record] = {}
    by_hash: dict[tuple, Record] = {}
    first: dict[tuple, Record] = {}
    for r in records:
        index = (r.run_id, r.point)
        if index in by_index:
            same = "the same record" if by_index[index].json == r.json else "another record"
            return r, f"repeated: {same} of this launch came before (run {shown(str(r.run_id), 40)}, point " \
                      f"{r.point}); a launch is evidence once"
        by_index[index] = r
        launch = r.json.get("launch_id")
        if isinstance(launch, str):
            if launch in by_id:
                return r, f"launch_id {launch} is point {by_id[launch].point}'s: one launch recorded twice"
            by_id[launch] = r
        if r.point_hash is not None and r.repetition is not None:
            hashed = (r.run_id, r.point_hash, r.repetition)
            if hashed in by_hash:
                return r, (f"point_key {r.point_hash} and repetition {r.repetition} are point "
                           f"{by_hash[hashed].point}'s: one launch recorded twice")
            by_hash[hashed] = r
        if r.imported:
            continue
        group = _point_group(r)
        if group not in first:
            first[group] = r
            continue
        mine, theirs = _conditions(r), _conditions(first[group])
        for key in mine:
            if key == "options":
                names = [n for n in mine[key] if _differs(mine[key][n], theirs[key].get(n))]
                if names:
                    n = names[0]
                    return r, (f"{n} {shown(str(mine[key][n]), 40)}, but {shown(str(theirs[key][n]), 40)} in point "
                               f"{first[group].point}, a launch of the same point: its launches differ in more "
                               f"than what they measured")
            elif _differs(mine[key], theirs[key]):
                return r, (f"{key} {shown(str(mine[key]), 60)}, but {shown(str(theirs[key]), 60)} in point "
                           f"{first[group].point}, a launch of the same point: its launches differ in more than "
                           f"what they measured")
    return None


def check_records(where: str, records: list[Record], directory: str | None = None) -> list[Record]:
    """``records`` when they obey every invariant (see the module's text); Refused naming ``where`` (the run
    directory, or the store's run), the point and the field otherwise."""
    for r in records:
        problem = record_problem(r, directory)
        if problem:
            raise Refused(where, f"{point_named(r)}: {problem}: not a measurement; refused")
    found = run_problem(records)
    if found:
        r, why = found
        raise Refused(where, f"{point_named(r)}: {why}; refused")
    return records
