"""The floor beside every answer: the run's floor (DIR/floor.json,
:mod:`mwperf.results.floor`) as tables and a figure, and the columns the
result tables gain from it and from DIR/baseline.json:

* ``x floor`` (latency and rate mode): the point's one-way p50 over the
  floor's one-way p50 (the lowest of the shared-memory, Unix socket and UDP
  ping-pongs) at the same size, CPU placement and wait strategy;
* ``% memcpy`` (throughput mode): the point's Mbit/s against memcpy's at
  that size and placement;
* ``% iperf3`` (throughput mode, where the run directory has a
  baseline.json): against the better of iperf3's TCP and UDP over the link.

A cell is ``-`` where the floor has no measurement to match the point.
"""

from __future__ import annotations

from pathlib import Path

from mwperf.export.figure_parts import plotly
from mwperf.export.figures import Figure
from mwperf.model.record import Record
from mwperf.results.floor import KINDS, PINGPONGS, FloorIndex, read_floor
from mwperf.results.rundir import RunDir

__all__ = ["Anchors", "floor_tables", "floor_figure", "X_FLOOR", "PCT_MEMCPY", "PCT_IPERF3"]

X_FLOOR = "x floor"
PCT_MEMCPY = "% memcpy"
PCT_IPERF3 = "% iperf3"


def _ratio(value: float) -> str:
    return f"{value:.1f}" if value >= 0.95 else f"{value:.2f}"


def _pct(value: float) -> str:
    return f"{value:.1f}" if value >= 1 else f"{value:.2f}"


def _us(value) -> str:
    return "-" if value is None else f"{value:.2f}" if value < 10 else f"{value:.1f}"


class Anchors:
    """What a record's figures are set against: the floor, iperf3's baseline."""

    def __init__(self, floor: dict | None = None, baseline: dict | None = None):
        self.floor = floor
        self.index = FloorIndex(floor)
        gbps: list[float] = [side["gbps"] for side in ((baseline or {}).get(k) for k in ("tcp", "udp"))
                             if isinstance(side, dict) and isinstance(side.get("gbps"), (int, float))
                             and side["gbps"] > 0]
        self.iperf3_gbps = max(gbps) if gbps else None

    @classmethod
    def of(cls, directory: Path | str) -> "Anchors":
        """The anchors a run directory holds (none when it has neither file)."""
        return cls(read_floor(directory), RunDir(directory).read_baseline())

    def __bool__(self) -> bool:
        return bool(self.index) or self.iperf3_gbps is not None

    def headers(self, mode: str) -> list[str]:
        if mode in ("latency", "rate"):
            return [X_FLOOR] if self.index else []
        if mode == "throughput":
            return ([PCT_MEMCPY] if self.index else []) + ([PCT_IPERF3] if self.iperf3_gbps else [])
        return []

    def cells(self, record: Record, mode: str) -> list[str]:
        """The record's cells under :meth:`headers`."""
        return [self.ratio(record, header, record.stat("p50") if header == X_FLOOR else record.mbps) or "-"
                for header in self.headers(mode)]

    def ratio(self, record: Record, header: str, value: float | None) -> str | None:
        """``value`` (a one-way p50 for X_FLOOR, else Mbit/s) of the record's point against the anchor
        ``header`` names, as shown; None where there is nothing to set it against."""
        where = (record.cpu.pub, record.cpu.sub, record.wait, record.size)
        if value is None:
            return None
        if header == X_FLOOR:
            floor = self.index.latency(*where)
            return _ratio(value / floor[0]) if floor else None
        gbps = self.index.memcpy_gbps(*where) if header == PCT_MEMCPY else self.iperf3_gbps
        return _pct(100 * value / (gbps * 1000)) if gbps else None


def _cores(floor: dict) -> str:
    cpu = floor["cpu"]
    pins = "" if cpu["pub"] is None or cpu["sub"] is None else f" {cpu['pub']},{cpu['sub']}"
    return f"{cpu['placement']}{pins}, wait {floor['wait']}"


def floor_tables(doc: dict | None) -> list[dict]:
    """One table per floor: ``{title, headers, rows, failure}`` (rows of
    cells; failure: why the floor was not measured)."""
    out = []
    for floor in (doc or {}).get("floors", []):
        by = {(e["kind"], e["size"]): e for e in floor["entries"]}
        methods = {e["kind"]: e["method"] for e in floor["entries"]}
        kinds = [k for k in PINGPONGS if k in methods]
        headers = ["Size"] + (["memcpy (Gbit/s)"] if "memcpy" in methods else [])
        for kind in kinds:
            headers += [f"{kind} {methods[kind]} 50% (us)", f"{kind} 99% (us)"]
        headers.append("floor 50% (us)")
        index = FloorIndex({"floors": [floor]})
        rows = []
        for size in sorted({e["size"] for e in floor["entries"]}):
            row = [str(size)]
            if "memcpy" in methods:
                memcpy = by.get(("memcpy", size))
                row.append("-" if not memcpy or "gbps" not in memcpy else f"{memcpy['gbps']:.1f}")
            for kind in kinds:
                latency = (by.get((kind, size)) or {}).get("latency_us") or {}
                row += [_us(latency.get("p50")), _us(latency.get("p99"))]
            best = index.latency(floor["cpu"]["pub"], floor["cpu"]["sub"], floor["wait"], size)
            row.append("-" if best is None else f"{_us(best[0])} ({best[1].split()[0]})")
            rows.append(row)
        took = "" if floor["elapsed_s"] is None else f"; measured in {floor['elapsed_s']:.1f} s"
        out.append({"title": f"floor: {_cores(floor)} (what no middleware can beat here; latency one-way = RTT/2, "
                             f"us{took})",
                    "headers": headers, "rows": rows, "failure": floor["error"]})
    return out


def floor_figure(doc: dict | None) -> Figure | None:
    """One-way p50 of each ping-pong and memcpy's Gbit/s vs size, one line per placement and wait."""
    floors = (doc or {}).get("floors", [])
    if not any(f["entries"] for f in floors):
        return None
    go, make_subplots = plotly()

    fig = make_subplots(rows=1, cols=2, subplot_titles=("ping-pong one-way p50 (µs)", "memcpy (Gbit/s)"))
    for floor in floors:
        where = _cores(floor)
        for kind in KINDS:
            entries = sorted((e for e in floor["entries"] if e["kind"] == kind and "skipped" not in e),
                             key=lambda e: e["size"])
            if not entries:
                continue
            method = entries[0]["method"]
            if kind == "memcpy":
                y = [e["gbps"] for e in entries]
                hover = "%{x:,} B: %{y:.1f} Gbit/s<extra>" + where + "</extra>"
            else:
                y = [e["latency_us"]["p50"] for e in entries]
                hover = "%{x:,} B: p50 %{y:.2f} µs<extra>" + where + "</extra>"
            fig.add_trace(go.Scatter(x=[e["size"] for e in entries], y=y, mode="lines+markers",
                                     name=f"{kind if kind == method else kind + ' ' + method} ({where})",
                                     hovertemplate=hover),
                          row=1, col=2 if kind == "memcpy" else 1)
    fig.update_xaxes(type="log", title_text="message size (B)")
    fig.update_yaxes(type="log", row=1, col=1)
    fig.update_layout(height=480, margin={"l": 60, "r": 20, "t": 80, "b": 60},
                      title={"text": "The floor: what no middleware can beat on this machine", "x": 0},
                      legend={"orientation": "h", "y": -0.25})
    return Figure("floor", "floor-figure", "The floor", fig)  # not "floor": the section's id
