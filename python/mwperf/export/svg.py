"""Self-contained SVG charts for the HTML report: no library, no CDN.

Every plotted value is a ``<circle class="pt">`` (or a heatmap ``<rect
class="cell">``) carrying ``data-series``, ``data-x`` and ``data-y`` (or
``data-v``): the report test reads them back from the page and checks them
against results.jsonl.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

__all__ = ["Series", "line_chart", "heatmap", "bar_chart", "histogram"]

W, H = 680, 360
LEFT, RIGHT, TOP, BOTTOM = 70, 190, 30, 50
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22")


@dataclass
class Series:
    name: str
    points: list[tuple[float, float]]
    # shaded bands, innermost first, each [(x, lo, hi)]: e.g. p50..p90 and p90..p99 around a p50 line
    bands: list[list[tuple[float, float, float]]] = field(default_factory=list)


def _fmt(v: float) -> str:
    if v == 0:
        return "0"
    if abs(v) >= 1e6 or abs(v) < 1e-2:
        return f"{v:.0e}"
    if abs(v) >= 100:
        return f"{v:.0f}"
    return f"{v:.3g}"


def _ticks(lo: float, hi: float, log: bool) -> list[float]:
    if log:
        a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
        return [10.0 ** e for e in range(a, b + 1)]
    if hi <= lo:
        return [lo]
    step = 10 ** math.floor(math.log10((hi - lo) / 5))
    for mult in (1, 2, 5, 10):
        if (hi - lo) / (step * mult) <= 6:
            step *= mult
            break
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step) + 1)]


class _Axis:
    def __init__(self, values: list[float], log: bool, pixels: tuple[float, float], zero: bool):
        vals = [v for v in values if v is not None and (v > 0 or not log)]
        lo, hi = (min(vals), max(vals)) if vals else (1.0, 10.0)
        if log:
            lo, hi = 10 ** math.floor(math.log10(lo)), 10 ** math.ceil(math.log10(hi))
            if lo == hi:
                hi = lo * 10
        else:
            lo = min(lo, 0.0) if zero else lo
            if hi == lo:
                hi = lo + 1
            pad = (hi - lo) * 0.05
            hi += pad
            lo = lo if zero else lo - pad
        self.lo, self.hi, self.log, self.pixels = lo, hi, log, pixels

    def __call__(self, v: float) -> float:
        a, b = self.pixels
        if self.log:
            t = (math.log10(v) - math.log10(self.lo)) / (math.log10(self.hi) - math.log10(self.lo))
        else:
            t = (v - self.lo) / (self.hi - self.lo)
        return a + t * (b - a)

    def ticks(self) -> list[float]:
        return [t for t in _ticks(self.lo, self.hi, self.log) if self.lo <= t <= self.hi * 1.0001]


def _open(chart_id: str, title: str, frame: bool = True) -> list[str]:
    """The svg element, its title and (frame) the plot area's border."""
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="{escape(chart_id)}" viewBox="0 0 {W} {H}" '
           f'width="{W}" height="{H}" role="img" aria-label="{escape(title)}">',
           f'<text x="{W / 2}" y="18" text-anchor="middle" class="title">{escape(title)}</text>']
    if frame:
        out.append(f'<rect x="{LEFT}" y="{TOP}" width="{W - LEFT - RIGHT}" height="{H - TOP - BOTTOM}" class="plot" '
                   f'fill="none" stroke="#999"/>')
    return out


def _y_grid(ya: _Axis) -> list[str]:
    return [f'<line x1="{LEFT}" y1="{ya(t):.1f}" x2="{W - RIGHT}" y2="{ya(t):.1f}" class="grid" stroke="#eee"/>'
            f'<text x="{LEFT - 5}" y="{ya(t) + 4:.1f}" text-anchor="end">{_fmt(t)}</text>' for t in ya.ticks()]


def _labels(x_label: str | None, y_label: str) -> list[str]:
    out = [f'<text x="15" y="{(TOP + H - BOTTOM) / 2}" text-anchor="middle" '
           f'transform="rotate(-90 15 {(TOP + H - BOTTOM) / 2})">{escape(y_label)}</text>']
    if x_label is not None:
        out.append(f'<text x="{(LEFT + W - RIGHT) / 2}" y="{H - 12}" text-anchor="middle">{escape(x_label)}</text>')
    return out


def _legend(index: int, name: str, color: str) -> str:
    y = TOP + 14 + 16 * index
    return (f'<rect x="{W - RIGHT + 10}" y="{y - 9}" width="10" height="10" fill="{color}"/>'
            f'<text x="{W - RIGHT + 25}" y="{y}" class="legend">{escape(name[:32])}</text>')


def _frame(title: str, x_label: str, y_label: str, xa: _Axis, ya: _Axis, chart_id: str) -> list[str]:
    out = _open(chart_id, title)
    for t in xa.ticks():
        x = xa(t)
        out.append(f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{H - BOTTOM}" class="grid" stroke="#eee"/>'
                   f'<text x="{x:.1f}" y="{H - BOTTOM + 15}" text-anchor="middle">{_fmt(t)}</text>')
    return out + _y_grid(ya) + _labels(x_label, y_label)


def line_chart(chart_id: str, title: str, series: list[Series], x_label: str, y_label: str, *,
               log_x: bool = False, log_y: bool = False) -> str:
    xs = [x for s in series for x, _ in s.points]
    ys = [y for s in series for _, y in s.points] + [v for s in series for band in s.bands
                                                     for _, lo, hi in band for v in (lo, hi)]
    xa = _Axis(xs, log_x, (LEFT, W - RIGHT), zero=False)
    ya = _Axis(ys, log_y, (H - BOTTOM, TOP), zero=not log_y)
    out = _frame(title, x_label, y_label, xa, ya, chart_id)
    for i, s in enumerate(series):
        color = PALETTE[i % len(PALETTE)]
        pts = sorted((x, y) for x, y in s.points if (x > 0 or not log_x) and (y > 0 or not log_y))
        for depth, raw in enumerate(s.bands):
            band = sorted(b for b in raw if (b[0] > 0 or not log_x) and (b[1] > 0 or not log_y))
            if len(band) >= 2:
                upper = " ".join(f"{xa(x):.1f},{ya(hi):.1f}" for x, _, hi in band)
                lower = " ".join(f"{xa(x):.1f},{ya(lo):.1f}" for x, lo, _ in reversed(band))
                out.append(f'<polygon class="band" points="{upper} {lower}" fill="{color}" '
                           f'fill-opacity="{0.3 / (depth + 1):.2f}" stroke="none"/>')
        if len(pts) >= 2:
            path = " ".join(f"{xa(x):.1f},{ya(y):.1f}" for x, y in pts)
            out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="1.5"/>')
        for x, y in pts:
            out.append(f'<circle class="pt" cx="{xa(x):.1f}" cy="{ya(y):.1f}" r="3" fill="{color}" '
                       f'data-series="{escape(s.name)}" data-x="{x!r}" data-y="{y!r}">'
                       f'<title>{escape(s.name)}: {_fmt(x)}, {_fmt(y)}</title></circle>')
        out.append(_legend(i, s.name, color))
    out.append("</svg>")
    return "\n".join(out)


def heatmap(chart_id: str, title: str, rows: list[float], cols: list[float], values: dict[tuple, float | None],
            row_label: str, col_label: str, row_fmt=_fmt, col_fmt=_fmt) -> str:
    """values[(row, col)] in [0, 1] (a rate); None or missing cells stay grey."""
    width = W - LEFT - RIGHT
    height = H - TOP - BOTTOM
    cw, ch = width / max(len(cols), 1), height / max(len(rows), 1)
    out = _open(chart_id, title, frame=False)
    for i, r in enumerate(rows):
        y = TOP + (len(rows) - 1 - i) * ch
        out.append(f'<text x="{LEFT - 5}" y="{y + ch / 2 + 4:.1f}" text-anchor="end">{escape(row_fmt(r))}</text>')
        for j, c in enumerate(cols):
            v = values.get((r, c))
            if v is None:
                fill, data = "#dddddd", ""
            else:
                t = min(max(v, 0.0), 1.0) ** 0.3  # small losses stay visible
                fill = f"rgb(255,{int(255 * (1 - t))},{int(255 * (1 - t))})"
                data = f' data-v="{v!r}"'
            out.append(f'<rect class="cell" x="{LEFT + j * cw:.1f}" y="{y:.1f}" width="{cw:.1f}" height="{ch:.1f}" '
                       f'fill="{fill}" stroke="#bbb" data-row="{r!r}" data-col="{c!r}"{data}>'
                       f'<title>{escape(row_fmt(r))}, {escape(col_fmt(c))}: '
                       f'{"no point" if v is None else f"{100 * v:.2f} %"}</title></rect>')
    for j, c in enumerate(cols):
        out.append(f'<text x="{LEFT + (j + 0.5) * cw:.1f}" y="{H - BOTTOM + 15}" text-anchor="middle">'
                   f'{escape(col_fmt(c))}</text>')
    out += _labels(col_label, row_label)
    out.append(f'<text x="{W - RIGHT + 10}" y="{TOP + 14}" class="legend">white: no loss</text>'
               f'<text x="{W - RIGHT + 10}" y="{TOP + 30}" class="legend">red: all lost</text>'
               f'<text x="{W - RIGHT + 10}" y="{TOP + 46}" class="legend">grey: no point</text>')
    out.append("</svg>")
    return "\n".join(out)


def bar_chart(chart_id: str, title: str, categories: list[str], series: dict[str, list[float | None]],
              y_label: str) -> str:
    """Grouped bars: one group per category, one bar per series."""
    vals = [v for vs in series.values() for v in vs if v is not None]
    ya = _Axis(vals or [0.0, 1.0], False, (H - BOTTOM, TOP), zero=True)
    out = _open(chart_id, title) + _y_grid(ya)
    group = (W - LEFT - RIGHT) / max(len(categories), 1)
    bw = group * 0.8 / max(len(series), 1)
    for i, cat in enumerate(categories):
        out.append(f'<text x="{LEFT + (i + 0.5) * group:.1f}" y="{H - BOTTOM + 15}" text-anchor="middle">'
                   f'{escape(cat[:14])}</text>')
        for k, (name, vs) in enumerate(series.items()):
            v = vs[i]
            if v is None:
                continue
            x = LEFT + i * group + group * 0.1 + k * bw
            out.append(f'<rect class="pt" x="{x:.1f}" y="{ya(v):.1f}" width="{bw:.1f}" height="{ya(0) - ya(v):.1f}" '
                       f'fill="{PALETTE[k % len(PALETTE)]}" data-series="{escape(name)}" data-x="{escape(cat)}" '
                       f'data-y="{v!r}"><title>{escape(cat)} {escape(name)}: {_fmt(v)}</title></rect>')
    out += [_legend(k, name, PALETTE[k % len(PALETTE)]) for k, name in enumerate(series)]
    out += _labels(None, y_label)
    out.append("</svg>")
    return "\n".join(out)


def histogram(chart_id: str, title: str, values: list[float], x_label: str, bins: int = 40) -> str:
    """Counts of ``values`` in ``bins`` equal bins between their 0.1 and 99.9 percentiles
    (the tails go into the outer bins); each bar carries data-x (bin start) and data-y (count)."""
    vals = sorted(values)
    lo = vals[int(0.001 * (len(vals) - 1))]
    hi = vals[int(0.999 * (len(vals) - 1))]
    if hi <= lo:
        hi = lo + 1.0
    width = (hi - lo) / bins
    counts = [0] * bins
    for v in vals:
        counts[min(bins - 1, max(0, int((v - lo) / width)))] += 1
    xa = _Axis([lo, hi], False, (LEFT, W - RIGHT), zero=False)
    ya = _Axis([0.0, float(max(counts))], False, (H - BOTTOM, TOP), zero=True)
    out = _frame(title, x_label, "samples", xa, ya, chart_id)
    for i, c in enumerate(counts):
        x0, x1 = xa(lo + i * width), xa(lo + (i + 1) * width)
        out.append(f'<rect class="pt bin" x="{x0:.1f}" y="{ya(c):.1f}" width="{max(x1 - x0 - 1, 1):.1f}" '
                   f'height="{ya(0) - ya(c):.1f}" fill="{PALETTE[0]}" data-series="histogram" '
                   f'data-x="{lo + i * width!r}" data-y="{c!r}"><title>{_fmt(lo + i * width)}: {c}</title></rect>')
    out.append("</svg>")
    return "\n".join(out)
