"""``mwperf max-rate``'s search: per middleware, size and QoS (a *cell*), the
highest publish rate whose rate-mode point meets a criterion.

The criterion: at most ``loss`` of the samples due in the measured phase did
not arrive (lost on the way or never sent: ``1 - received / scheduled``, so
a publisher that cannot keep its rate does not pass for a lossless one),
and, when asked, a one-way p99 latency at most ``p99``. A failed point does
not meet it.

The search is a probabilistic bisection (:mod:`mwperf.stats.probing`): from
the start rate, each probe goes to the posterior median of the limit, given
every verdict so far and that a verdict can be noisy or transient, so near
the boundary it probes again where one verdict left it uncertain. It ends
when its answer, the rate the limit lies above with 95 % confidence, is
within ``step`` of the posterior median, or after the most probes the cell
may take (:func:`worst_case_probes`). Each probe is a rate-mode point with
its own adaptive stop (``--precision``) on the flow it is judged by (its
received rate and loss; with ``--p99`` its latency too) and a record with a
``search`` section: the criterion, the step, the limit's 90 % interval after
the probe (``bracket``), whether it met the criterion and why, and on a
cell's last probe the answer. The search assumes that meeting the criterion
is monotone in the rate, up to the probes' noise. It is a function of the
probes so far: ``mwperf max-rate --resume DIR`` replays a run's probes and
goes on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Iterator, Sequence

from mwperf.errors import UnitError, UsageError
from mwperf.execute.progress import POINT_OVERHEAD_S
from mwperf.model.record import Record
from mwperf.plan.options import PlannedPoint
from mwperf.stats.probing import answer, next_probe
from mwperf.units import parse_duration_ns, parse_list, parse_rate_hz

__all__ = ["Criterion", "Cell", "Search", "parse_criterion", "judge", "worst_case_probes", "worst_case_s",
           "DEFAULT_STEP", "DEFAULT_BOUNDS_HZ", "DEFAULT_START_HZ"]

DEFAULT_STEP = 0.05
DEFAULT_BOUNDS_HZ = (1.0, 1e6)
DEFAULT_START_HZ = 1000.0


@dataclass(frozen=True)
class Criterion:
    """What a probe must meet, and how the search goes (``step``, ``bounds_hz``)."""

    loss: float
    p99_us: float | None = None
    step: float = DEFAULT_STEP
    bounds_hz: tuple[float, float] = DEFAULT_BOUNDS_HZ

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


def worst_case_probes(crit: Criterion) -> int:
    """The most probes one cell's search makes: three times what a noiseless
    bisection of the bounds down to the step needs, and three (at the
    defaults, 30; the seeded noisy searches of python/tests/stats take 16 on
    average, 24 at the 90th percentile)."""
    low, high = crit.bounds_hz
    return 3 * math.ceil(math.log2(math.log(high / low) / math.log1p(crit.step)) - 1e-9) + 3


def worst_case_s(cells: list[PlannedPoint], crit: Criterion) -> float:
    """The longest the search of these cells can take (each probe its warm-up,
    maximum duration and start-up)."""
    return sum(worst_case_probes(crit) * (c.point.planned_s + POINT_OVERHEAD_S) for c in cells)


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


class Cell:
    """One cell's search: its probes so far (rate, met), the rate to try next
    and, once done, the answer."""

    def __init__(self, crit: Criterion, start_hz: float, probes: tuple[tuple[float, bool], ...] = ()):
        self.crit = crit
        self.start = start_hz
        self.probes: list[tuple[float, bool]] = list(probes)

    @property
    def next(self) -> float | None:
        return next_probe(self.probes, self.crit.bounds_hz, self.crit.step, self.start, worst_case_probes(self.crit))

    @property
    def phase(self) -> str:
        """grow: no probe has met the criterion, or none has failed it, yet; bisect: between them."""
        return "bisect" if len({met for _, met in self.probes}) == 2 else "grow"

    def add(self, rate: float, met: bool) -> None:
        self.probes.append((rate, met))

    @property
    def done(self) -> bool:
        return self.next is None

    def answer(self) -> tuple[float | None, list[float], str | None]:
        """(the answer, the limit's 90 % interval, a note)."""
        top, lo, hi, note = answer(self.probes, self.crit.bounds_hz, self.crit.step)
        return top, [float(f"{lo:.4g}"), float(f"{hi:.4g}")], note


class Search:
    """The probes of every cell, decided as their records come: iterate it
    for the next point; :meth:`on_record` completes a probe's record (its
    ``search`` section) and moves the cell's search. ``earlier``: the records
    of an interrupted run of the same searches (``--resume``), replayed."""

    def __init__(self, cells: list[PlannedPoint], crit: Criterion, earlier: Sequence[Record] = ()):
        self.cells = cells
        self.crit = crit
        self._search: Cell | None = None
        self._cell = 0
        self._earlier: dict[int, list[tuple[int, float, bool, bool]]] = {}  # cell: (probe, rate, met, done)
        for r in earlier:
            if r.search is not None and r.rate_hz is not None:
                self._earlier.setdefault(r.search.cell, []).append((r.search.probe, r.rate_hz, r.search.met,
                                                                    r.search.done))
        self._index = len(earlier)

    def planned(self) -> list[PlannedPoint]:
        """The points at their worst case (each cell's start rate, as many times
        as it can be probed, less what an earlier run probed): what the floor,
        the placement checks and the progress bar plan with."""
        most = worst_case_probes(self.crit)
        return [c for i, c in enumerate(self.cells) if not self._finished(i)
                for _ in range(max(1, most - len(self._earlier.get(i, []))))]

    def _finished(self, cell: int) -> bool:
        return any(done for _, _, _, done in self._earlier.get(cell, []))

    @staticmethod
    def _start(cell: PlannedPoint) -> float:
        return cell.point.rate_hz or DEFAULT_START_HZ

    def __iter__(self) -> Iterator[PlannedPoint]:
        for number, cell in enumerate(self.cells):
            self._cell = number
            if self._finished(number):
                continue
            before = sorted(self._earlier.get(self._cell, []))
            self._search = search = Cell(self.crit, self._start(cell),
                                         tuple((float(rate), bool(met)) for _, rate, met, _ in before))
            while (rate := search.next) is not None:
                values = tuple((k, rate if k == "rate" else v) for k, v in cell.point.values)
                yield replace(cell, point=replace(cell.point, index=self._index, values=values))
                self._index += 1

    def on_record(self, job: PlannedPoint, record: dict) -> dict:
        """The probe's record with its ``search`` section; the cell's search moved."""
        search, rate = self._search, job.point.rate_hz
        assert search is not None and rate is not None, "a probe of the search being iterated, at its rate"
        met, why, missing = judge(Record.from_json(record), self.crit)
        phase = search.phase
        search.add(rate, met)
        done = search.done
        top, limit, note = search.answer()
        section = {
            "criterion": self.crit.as_dict(),
            "step": self.crit.step,
            "bounds_hz": list(self.crit.bounds_hz),
            "cell": self._cell,
            "probe": len(search.probes),
            "phase": phase,
            "met": met,
            "why": why,
            "missing": missing,
            "bracket": limit,
            "done": done,
            "max_rate_hz": top if done else None,
            "note": note if done else None,
        }
        return {**record, "search": section}
