"""``mwperf max-rate``'s search: per middleware, size and QoS (a *cell*), the
highest publish rate whose rate-mode point meets a criterion.

The criterion: at most ``loss`` of the samples due in the measured phase did
not arrive (lost on the way or never sent: ``1 - received / scheduled``, so
a publisher that cannot keep its rate does not pass for a lossless one),
and, when asked, a one-way p99 latency at most ``p99``. A failed point does
not meet it.

The search brackets the answer: from the start rate it multiplies the rate
by ``GROWTH`` while the criterion is met (divides it while it is not) until
one rate met it and a higher one did not, within the bounds; then it
bisects the bracket (geometric midpoints) until its ends are within ``step``
of each other (``hi / lo <= 1 + step``). The answer is the bracket's low
end: the highest rate measured to meet the criterion. Each probe is a
rate-mode point with its own adaptive stop (``--precision``) and a record
with a ``search`` section: the criterion, the step, the bracket after the
probe, whether it met the criterion and why, and on a cell's last probe the
answer. The search assumes that meeting the criterion is monotone in the
rate (a rate above one that failed fails too).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Iterator

from mwperf.errors import UnitError, UsageError
from mwperf.execute.progress import POINT_OVERHEAD_S
from mwperf.model.record import Record
from mwperf.plan.options import PlannedPoint
from mwperf.units import format_rate_hz, parse_duration_ns, parse_list, parse_rate_hz

__all__ = ["Criterion", "Bracket", "Search", "parse_criterion", "judge", "worst_case_probes", "worst_case_s",
           "GROWTH", "DEFAULT_STEP", "DEFAULT_BOUNDS_HZ", "DEFAULT_START_HZ"]

#: The factor the rate grows (or shrinks) by until the answer is bracketed.
GROWTH = 4.0
DEFAULT_STEP = 0.05
DEFAULT_BOUNDS_HZ = (1.0, 1e6)
DEFAULT_START_HZ = 1000.0
#: A probe's rate, in this many significant digits.
DIGITS = 4


@dataclass(frozen=True)
class Criterion:
    """What a probe must meet, and how the search goes (``step``, ``bounds_hz``)."""

    loss: float
    p99_us: float | None = None
    step: float = DEFAULT_STEP
    bounds_hz: tuple[float, float] = DEFAULT_BOUNDS_HZ
    growth: float = GROWTH

    def said(self) -> str:
        text = f"loss <= {100 * self.loss:g}%"
        return text + (f", p99 <= {self.p99_us:g} us" if self.p99_us is not None else "")

    def as_dict(self) -> dict:
        return {"loss": self.loss, "p99_us": self.p99_us}


def _fraction(option: str, text: str, low: float, high: float, high_ok: bool) -> float:
    raw = str(text).strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise UsageError(option, text, "expected a percentage with its number, e.g. 1%") from None
    if not math.isfinite(value) or value < low or value > high or (value == high and not high_ok):
        upper = f"{100 * high:g}%" + ("" if high_ok else " (excluded)")
        raise UsageError(option, text, f"must be from {100 * low:g}% to {upper}")
    return value


def parse_criterion(loss: str | None, p99: str | None = None, step: str | None = None,
                    bounds: str | None = None) -> Criterion:
    """The criterion as given (``--loss 1%``, ``--p99 2ms``, ``--step 5%``,
    ``--bounds 10,100k``); UsageError naming the option and its value."""
    if loss is None:
        raise UsageError("--loss", None, "max-rate needs its criterion: the loss it allows, e.g. --loss 1%")
    crit = Criterion(loss=_fraction("--loss", loss, 0.0, 1.0, False))
    if p99 is not None:
        try:
            crit = replace(crit, p99_us=parse_duration_ns(str(p99)) / 1000.0)
        except UnitError as exc:
            raise UsageError("--p99", p99, f"{exc} (e.g. 2ms)") from None
    if step is not None:
        crit = replace(crit, step=_fraction("--step", step, 0.001, 1.0, True))
    if bounds is not None:
        try:
            low, high = (parse_rate_hz(x) for x in parse_list(str(bounds)))
        except (UnitError, ValueError):
            raise UsageError("--bounds", bounds, "expected the lowest and highest rate, e.g. 10,100k") from None
        if not low < high:
            raise UsageError("--bounds", bounds, "the lowest rate must be below the highest")
        crit = replace(crit, bounds_hz=(low, high))
    return crit


def _rounded(rate: float) -> float:
    return float(f"{rate:.{DIGITS}g}")


def worst_case_probes(crit: Criterion, start_hz: float) -> int:
    """The most probes one cell's search makes: the start, the way to the
    farther bound, and the bisection of one growth factor down to the step."""
    low, high = crit.bounds_hz
    start = min(max(start_hz, low), high)
    away = max(math.ceil(math.log(high / start, crit.growth) - 1e-9),
               math.ceil(math.log(start / low, crit.growth) - 1e-9))
    halvings = math.ceil(math.log2(math.log(crit.growth) / math.log1p(crit.step)) - 1e-9)
    return 1 + away + max(0, halvings)


def worst_case_s(cells: list[PlannedPoint], crit: Criterion) -> float:
    """The longest the search of these cells can take (each probe its warm-up,
    maximum duration and start-up)."""
    return sum(worst_case_probes(crit, c.point.rate_hz or DEFAULT_START_HZ) * (c.point.planned_s + POINT_OVERHEAD_S)
               for c in cells)


def judge(record: Record, crit: Criterion) -> tuple[bool, str, float | None]:
    """(met, why, missing): whether a probe's record meets the criterion;
    ``missing``: the share of the samples due that did not arrive."""
    if not record.ok:
        return False, f"point failed: {record.error}", None
    scheduled, received = record.scheduled, record.received
    if scheduled is not None and scheduled > 0 and received is not None:
        missing: float | None = max(0.0, 1.0 - min(received, scheduled) / scheduled)
    else:
        missing = record.loss_rate
    if missing is None:
        return False, "no loss figure", None
    said = f"{100 * missing:.3g}% of the due samples missing"
    if missing > crit.loss:
        return False, f"{said} > {100 * crit.loss:g}%", missing
    if crit.p99_us is not None:
        p99 = record.stat("p99")
        if p99 is None:
            return False, f"{said}; p99 not measured (too few samples)", missing
        if p99 > crit.p99_us:
            return False, f"{said}; p99 {p99:.4g} us > {crit.p99_us:g} us", missing
        said += f", p99 {p99:.4g} us"
    return True, said, missing


class Bracket:
    """One cell's search: the highest rate that met the criterion (``lo``) and
    the lowest that did not (``hi``), and the rate to try next."""

    def __init__(self, crit: Criterion, start_hz: float):
        self.crit = crit
        low, high = crit.bounds_hz
        self.lo: float | None = None
        self.hi: float | None = None
        self.next: float | None = _rounded(min(max(start_hz, low), high))
        self.probes = 0

    @property
    def phase(self) -> str:
        return "bisect" if self.lo is not None and self.hi is not None else "grow"

    def add(self, rate: float, met: bool) -> None:
        self.probes += 1
        if met:
            self.lo = rate if self.lo is None else max(self.lo, rate)
        else:
            self.hi = rate if self.hi is None else min(self.hi, rate)
        low, high = self.crit.bounds_hz
        lo, hi = self.lo, self.hi
        if hi is None:
            assert lo is not None  # it met: the rate grows
            self.next = None if lo >= high else _rounded(min(lo * self.crit.growth, high))
        elif lo is None:
            self.next = None if hi <= low else _rounded(max(hi / self.crit.growth, low))
        elif hi / lo <= 1 + self.crit.step:
            self.next = None
        else:
            mid = _rounded(math.sqrt(lo * hi))
            self.next = mid if lo < mid < hi else None

    @property
    def done(self) -> bool:
        return self.next is None

    def note(self) -> str | None:
        """What the answer is when the bracket never closed."""
        low, high = self.crit.bounds_hz
        if self.hi is None:
            return f"met at the highest rate searched ({format_rate_hz(high)} Hz): the maximum is at least that"
        if self.lo is None:
            return f"not met at the lowest rate searched ({format_rate_hz(low)} Hz)"
        return None


class Search:
    """The probes of every cell, decided as their records come: iterate it
    for the next point; :meth:`on_record` completes a probe's record (its
    ``search`` section) and moves the cell's bracket."""

    def __init__(self, cells: list[PlannedPoint], crit: Criterion):
        self.cells = cells
        self.crit = crit
        self._bracket: Bracket | None = None
        self._cell = 0
        self.answers: list[dict] = []

    def planned(self) -> list[PlannedPoint]:
        """The points at their worst case (each cell's start rate, as many times
        as it can be probed): what the floor, the placement checks and the
        progress bar plan with."""
        return [c for c in self.cells for _ in range(worst_case_probes(self.crit, self._start(c)))]

    @staticmethod
    def _start(cell: PlannedPoint) -> float:
        return cell.point.rate_hz or DEFAULT_START_HZ

    def __iter__(self) -> Iterator[PlannedPoint]:
        index = 0
        for number, cell in enumerate(self.cells):
            self._cell = number
            self._bracket = bracket = Bracket(self.crit, self._start(cell))
            while not bracket.done:
                values = tuple((k, bracket.next if k == "rate" else v) for k, v in cell.point.values)
                yield replace(cell, point=replace(cell.point, index=index, values=values))
                index += 1

    def on_record(self, job: PlannedPoint, record: dict) -> dict:
        """The probe's record with its ``search`` section; the bracket moved."""
        bracket = self._bracket
        rate = job.point.rate_hz
        assert bracket is not None and rate is not None, "a probe of the search being iterated, at its rate"
        met, why, missing = judge(Record.from_json(record), self.crit)
        phase = bracket.phase
        bracket.add(rate, met)
        done = bracket.done
        section = {
            "criterion": self.crit.as_dict(),
            "step": self.crit.step,
            "growth": self.crit.growth,
            "bounds_hz": list(self.crit.bounds_hz),
            "cell": self._cell,
            "probe": bracket.probes,
            "phase": phase,
            "met": met,
            "why": why,
            "missing": missing,
            "bracket": [bracket.lo, bracket.hi],
            "done": done,
            "max_rate_hz": bracket.lo if done else None,
            "note": bracket.note() if done else None,
        }
        if done:
            self.answers.append(section)
        return {**record, "search": section}
