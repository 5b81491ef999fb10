"""Within-launch and between-launch variation of a point's p50 latency.

A record is one launch of a point (its two agents started for it): its
``p50_ci`` says how well that launch pinned down its own p50, and nothing
about the next launch, which may sit somewhere else (another page layout,
another wake-up mode). The repetitions of a point (a plan's ``repetitions``,
each its own launch) show that spread: :func:`spread` summarises both, as
fractions of the median p50 over the launches:

* ``between``: the standard deviation of the launches' p50s over their mean
  (null with one launch);
* ``within``: the median over the launches of their p50 interval's
  half-width over their p50 (null where no launch has an interval);
* ``ratio``: between / within; well above 1, the launch is the unit that
  varies, and one launch's interval understates what another launch would
  measure.

:func:`headline`: the point's headline from its launches (the launches'
median of p50, p99, p99.9, the received rate and the loss, each with its
order-statistic interval, :mod:`mwperf.stats.launches`), whether the
intervals reached the precision asked and, when not, how many more
launches (and seconds) they are expected to need. :func:`as_points`: a
run's records as its points, each point of several launches as its
headline, for the tables.
"""

from __future__ import annotations

import statistics

from mwperf.model.labels import point_id
from mwperf.model.record import Record
from mwperf.model.sections import Figure, Headline, Launches
from mwperf.stats.launches import (half_width, launch_interval, launches_for, launches_needed, order_level, rank_for,
                                   supports)

__all__ = ["p50", "spread", "spread_text", "headline", "as_points", "launches_note"]

#: The latency percentiles of the headline: record field and quantile.
_LATENCY = (("p50_us", "p50", 0.5), ("p99_us", "p99", 0.99), ("p999_us", "p999", 0.999))


def p50(record: Record) -> float | None:
    value = record.stat("p50")
    return None if value is None else float(value)


def _within(record: Record) -> float | None:
    stats = record.latency_us
    if stats is None or stats.p50_ci is None or stats.p50 is None or stats.p50 <= 0:
        return None
    return (stats.p50_ci[1] - stats.p50_ci[0]) / 2 / stats.p50


def spread(records: list[Record], precision: float | None = None) -> Launches | None:
    """The spread over the launches ``records`` of one point (the record's
    ``launches``), with its headline; the p50's spread None where no launch has
    a p50 (the headline is there all the same); None without records."""
    values = [v for v in map(p50, records) if v is not None]
    if not values:
        return Launches(len(records), None, None, None, None, None, None, headline(records, precision)) \
            if records else None
    mean = statistics.fmean(values)
    between = statistics.stdev(values) / mean if len(values) >= 2 and mean > 0 else None
    halves = [w for w in map(_within, records) if w is not None]
    within = statistics.median(halves) if halves else None
    return Launches(len(values), statistics.median(values), min(values), max(values), between, within,
                    between / within if between is not None and within else None, headline(records, precision))


def _values(records: list[Record]) -> dict[str, list[float]]:
    """Each headline figure's value in every launch that measured it (a percentile: from enough samples)."""
    out: dict[str, list[float]] = {name: [] for name, _, _ in _LATENCY}
    for r in records:
        stats = r.latency_us
        for name, key, q in _LATENCY:
            value = None if stats is None else stats.figure(key)
            if value is not None and supports(stats.count if stats is not None else None, q):
                out[name].append(float(value))
    out["samples_per_s"] = [float(r.samples_per_s) for r in records if r.samples_per_s is not None]
    out["loss_rate"] = [float(r.loss_rate) for r in records if r.loss_rate is not None]
    return out


def _weighed(mode: str, figures: dict[str, Figure | None]) -> list[str]:
    """The figures the precision weighs, as the agent's stop does: latency (p50, p99), or a flow's rate."""
    names = ["samples_per_s"] if mode == "throughput" else ["p50_us", "p99_us"]
    return [n for n in names if figures.get(n) is not None]


def headline(records: list[Record], precision: float | None = None) -> Headline:
    """The headline of one point from its launches ``records`` (module doc)."""
    values = _values(records)
    figures: dict[str, Figure | None] = {}
    level = None
    for name, xs in values.items():
        interval = launch_interval(xs)
        if interval.estimate is None:
            figures[name] = None
            continue
        figures[name] = Figure(interval.estimate, interval.lo, interval.hi, interval.launches)
        if interval.level is not None:
            level = interval.level if level is None else min(level, interval.level)
    reached = more = more_s = None
    weighed = _weighed(records[0].mode if records else "latency", figures)
    if precision and weighed:
        widths = [half_width(launch_interval(values[n])) for n in weighed]
        reached = all(w is not None and w <= precision for w in widths)
        n = len(records)
        # judged by the launches' spread; a figure fewer than two launches measured (one launch, or launches
        # too short for it): as many more as an interval of it needs at all
        needs = [launches_needed(values[name], precision) or n + launches_for() - len(values[name])
                 for name in weighed]
        more = 0 if reached else max(1, max(needs) - n)
        spent = [r.phases.get("total_s") for r in records if r.phases]
        took = [float(t) for t in spent if isinstance(t, (int, float))]
        more_s = None if more is None or not took else more * statistics.median(took)
    return Headline(level, figures["p50_us"], figures["p99_us"], figures["p999_us"], figures["samples_per_s"],
                    figures["loss_rate"], precision or None, reached, more, more_s)


def spread_text(s: Launches | None) -> str:
    """``±6.1% / ±1.2% (3)``: between-launch / within-launch, and the launches."""
    if s is None:
        return "-"

    def pct(v: float | None) -> str:
        return "-" if v is None else f"±{100 * v:.1f}%"

    return f"{pct(s.between)} / {pct(s.within)} ({s.launches})"


def _median(values: list[float | None]) -> float | None:
    xs = [v for v in values if v is not None]
    return statistics.median(xs) if xs else None


def _sum(values: list[int | None]) -> int | None:
    xs = [v for v in values if v is not None]
    return sum(xs) if xs else None


def _as_point(launches: list[Record]) -> Record:
    """A point of several launches as one record: its newest ok launch's, with the launches' medians of
    its headline figures (p50, p99, p99.9 with their intervals from the launches, the received rate, the
    loss, Mbit/s), their summed counts, and their spread and headline (``launches``)."""
    ok = [r for r in launches if r.ok]
    if len(ok) < 2:
        return ok[-1] if ok else launches[-1]
    newest = ok[-1]
    summary = spread(ok, newest.precision)
    head = summary.headline if summary is not None else headline(ok, newest.precision)
    json = dict(newest.json)
    stats = json.get("latency_us")
    if isinstance(stats, dict) and head is not None:
        stats = dict(stats, count=_sum([r.latency_us.count if r.latency_us else None for r in ok]))
        for key, figure in (("p50", head.p50_us), ("p99", head.p99_us), ("p999", head.p999_us)):
            stats[key] = None if figure is None else figure.estimate
            stats[f"{key}_ci"] = None if figure is None or figure.lo is None else [figure.lo, figure.hi]
        json["latency_us"] = stats
    json.update(samples_per_s=_median([r.samples_per_s for r in ok]), loss_rate=_median([r.loss_rate for r in ok]),
                mbps=_median([r.mbps for r in ok]), sent=_sum([r.sent for r in ok]),
                received=_sum([r.received for r in ok]), lost=_sum([r.lost for r in ok]),
                launches=None if summary is None else summary.to_json())
    return Record.from_json(json)


def as_points(records: list[Record]) -> list[Record]:
    """Each point of a run once (module doc), in the order its first launch ran; a record that is no
    launch of a point (imported, a search's probe, a scenario's flow, a point of one launch) as it is."""
    groups: dict[tuple[object, ...], list[Record]] = {}
    for r in records:
        alone = r.repetition is None or r.imported or r.search is not None or r.scenario is not None
        groups.setdefault(("alone", id(r)) if alone else (r.run_id, point_id(r)), []).append(r)
    return [_as_point(members) for members in groups.values()]


def launches_note(record: Record) -> str | None:
    """``6 launches, 96.9 %: p50 [4.1, 4.4] us, p99 [...]``: a point's headline intervals, for a table row."""
    summary = record.launches
    head = summary.headline if summary is not None else None
    if summary is None or head is None or head.level is None:
        return None
    parts, first = [], None
    for name, figure, unit in (("p50", head.p50_us, " us"), ("p99", head.p99_us, " us"),
                               ("S/s", head.samples_per_s, "")):
        if figure is not None and figure.lo is not None and figure.hi is not None:
            level = order_level(figure.launches, rank_for(figure.launches) or 1)  # the level its interval has
            first = level if first is None else first
            said = "" if level == first else f" ({100 * level:.1f} %, {figure.launches} launches)"
            parts.append(f"{name} [{figure.lo:.4g}, {figure.hi:.4g}]{unit}{said}")
    if first is None:
        return None
    text = f"{summary.launches} launches, {100 * first:.1f} %: " + ", ".join(parts)
    if head.reached is False:
        more = f"{head.more_launches} more launches" + (f" ({head.more_s:.0f} s)" if head.more_s is not None else "")
        text += f"; ±{100 * (head.precision or 0):g} % needs {more}"
    elif head.reached:
        text += f"; within ±{100 * (head.precision or 0):g} %"
    return text
