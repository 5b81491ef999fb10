"""Discovery's records (a run directory's discovery.jsonl, written by
``mwperf run --mode discovery`` and discovery plans) and their section of
the report: how the time to match and to the first sample grow with N, one
row per middleware, discovery configuration, T and link, a column per N;
the traffic the kernel counted on the link the same way; then each
configuration's own table (:mod:`mwperf.export.discovery`: pairs, CPU and RSS
per participant, packets and bytes). report.html of a discovery run is this
section; ``mwperf report DIR`` writes it again from discovery.jsonl. A sweep
whose plan has discovery matrices has both files: its report.html has this
section after the others (:func:`html_section`), its terminal a line a point
(:func:`compact_lines`).

discovery.jsonl is read as untrusted input (a run directory travels): read
inside the directory, bounded, every record checked for the fields and
types the tables use; a bad line is skipped with one warning naming it."""

from __future__ import annotations

import json
import os
from html import escape
from pathlib import Path
from typing import Any, Callable

from mwperf.display import shown
from mwperf.export.discovery import discovery_sections, link_counts
from mwperf.export.page import CSS, section_html
from mwperf.export.sections import Row, Section
from mwperf.results.reading import MAX_RESULTS_BYTES, UnsafeFile, open_inside
from mwperf.results.rundir import write_atomic

__all__ = ["RESULTS", "REPORT", "read_discovery", "record_problem", "vs_n_sections", "discovery_sections",
           "all_sections", "html_section", "compact_lines", "render_page", "discovery_report"]

RESULTS = "discovery.jsonl"
REPORT = "report.html"

_NUM = (int, float)
#: Every record's fields and their types (a failed point's: these and ``error``).
_KEYS: dict[str, tuple] = {"mw": (str,), "participants": (int,), "topics": (int,), "discovery": (str,)}
_MEASURED: dict[str, tuple] = {"complete": (bool,), "time_to_match_ms": (*_NUM, type(None)),
                               "time_to_first_sample_ms": (*_NUM, type(None)), "remote_pairs": (int,),
                               "pairs_expected": (int,), "cpu_ms": (list,), "rss_kb": (list,),
                               "traffic": (dict, type(None))}


def record_problem(r: Any) -> str | None:
    """Why ``r`` is not a discovery record the tables can show; None when it is one."""
    if not isinstance(r, dict):
        return "not a JSON object"
    if not isinstance(r.get("link"), (dict, type(None))):
        return "link: not an object"
    wanted = {**_KEYS, **({"error": (str,)} if "error" in r else _MEASURED)}
    for key, types in wanted.items():
        if not isinstance(r.get(key), types) or isinstance(r.get(key), bool) and bool not in types:
            return f"{key}: missing or not a {'/'.join(t.__name__ for t in types)}"
    if "error" in r:
        return None
    for key in ("cpu_ms", "rss_kb"):
        if not r[key] or not all(isinstance(v, _NUM) and not isinstance(v, bool) for v in r[key]):
            return f"{key}: not a list of numbers"
    traffic = r["traffic"]
    if traffic is not None and not all(isinstance(traffic.get(k), dict) and all(
            isinstance(traffic[k].get(u), int) for u in ("packets", "bytes")) for k in ("udp", "metatraffic_ports")):
        return "traffic: not packets and bytes of udp and metatraffic_ports"
    if traffic is not None and "tcp" in traffic and not (isinstance(traffic["tcp"], dict) and all(
            isinstance(traffic["tcp"].get(u), int) for u in ("packets", "bytes"))):
        return "traffic: tcp not packets and bytes"
    return None


def read_discovery(directory: Path | str, warn: Callable[[str], object]) -> list[dict]:
    """The records of ``directory``'s discovery.jsonl ([] when it has none); a bad line is skipped with one
    warning naming it."""
    try:
        fd = open_inside(directory, RESULTS)
    except FileNotFoundError:
        return []
    except (UnsafeFile, OSError) as exc:
        warn(f"{RESULTS}: not read: {exc}")
        return []
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_RESULTS_BYTES + 1)
    if len(data) > MAX_RESULTS_BYTES:
        warn(f"{RESULTS}: larger than {MAX_RESULTS_BYTES >> 20} MiB: not read")
        return []
    records = []
    for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        problem = "not JSON" if record is None else record_problem(record)
        if problem:
            warn(f"{RESULTS} line {number} skipped: {shown(problem, 120)}")
        else:
            records.append(record)
    return records


def _link(r: dict) -> str:
    link = r.get("link")
    return "loopback" if not link else f"netns:{link.get('profile', '?')}"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def _times(r: dict | None) -> str:
    if r is None:
        return ""
    said = f"{_ms(r['time_to_match_ms'])} / {_ms(r['time_to_first_sample_ms'])}"
    return said if r["complete"] else f"{said} (incomplete)"


def vs_n_sections(records: list[dict]) -> list[Section]:
    """Time to match / to the first sample vs N, and (on a link) packets / kB vs N: a row per middleware,
    configuration, T, link and participants' form."""
    ok = [r for r in records if "error" not in r]
    ns = sorted({r["participants"] for r in ok})
    if not ns:
        return []
    groups: dict[tuple, dict[int, dict]] = {}
    for r in ok:
        key = (r["mw"], r["discovery"], r["topics"], _link(r), str(r.get("participants_as", "processes")))
        groups.setdefault(key, {})[r["participants"]] = r  # the last measured at an N, as the tables
    left = (0, 1, 2, 3, 4)
    head = ["Middleware", "Discovery", "T", "Link", "Participants as"]
    times = Section("", "discovery", "discovery: time to match / to the first sample (ms) vs N participants",
                    head + [f"N={n}" for n in ns], left=left)
    traffic = Section("", "discovery",
                      "discovery: traffic on the link vs N (UDP and TCP packets / kB, counted by nftables)",
                      head + [f"N={n}" for n in ns], left=left)
    for key in sorted(groups, key=lambda k: (k[0], k[1], k[2], k[3], k[4])):
        at = groups[key]
        cells = [key[0], key[1], str(key[2]), key[3], key[4]]
        times.rows.append(Row(cells + [_times(at.get(n)) for n in ns]))
        if any(r["traffic"] for r in at.values()):
            traffic.rows.append(Row(cells + [
                _packets_kb(at[n]["traffic"]) if n in at and at[n]["traffic"] else "" for n in ns]))
    return [times] + ([traffic] if traffic.rows else [])


def _packets_kb(traffic: dict) -> str:
    packets, size, _ = link_counts(traffic)
    return f"{packets} / {size / 1000:.0f}"


def all_sections(records: list[dict]) -> list[Section]:
    """The vs-N tables, then each configuration's."""
    return vs_n_sections(records) + discovery_sections(records)


def html_section(records: list[dict]) -> str:
    """The report's discovery section: every table, then their notes."""
    parts = ['<section id="discovery"><h2>Discovery</h2>']
    sections = all_sections(records)
    parts += [section_html(s) for s in sections]
    for s in sections:
        notes = sorted({row.note for row in s.rows if row.note})
        parts += [f'<p class="hint">{escape(n)}</p>' for n in notes]
    return "\n".join(parts + ["</section>"])


def compact_lines(records: list[dict], most: int = 2, width: int = 100) -> list[str]:
    """The points as the end of a sweep says them: a line per configuration (N, T, discovery, link), its
    middlewares' times side by side; at most ``most`` lines of ``width`` columns, else one line for all
    (the tables are report.html's)."""
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        form = r.get("participants_as") or "processes"
        key = (r["participants"], r["topics"], r["discovery"], _link(r), "" if form == "processes" else f" {form}")
        groups.setdefault(key, []).append(r)
    lines = []
    for (n, t, discovery, link, form), rs in groups.items():
        said = [f"{r['mw']} failed" if "error" in r else f"{r['mw']} {_times(r).replace(' / ', '/')}" for r in rs]
        lines.append(f"discovery N={n} T={t} {discovery} {link}{form}, ms to match / 1st sample: {', '.join(said)}")
    if len(lines) > most or any(len(line) > width for line in lines):
        done = sum(1 for r in records if r.get("complete"))
        return [f"discovery: {len(records)} points, {done} complete (their tables: report.html)"]
    return lines


def render_page(records: list[dict], title: str) -> str:
    """report.html of a discovery run: its tables, no script."""
    parts = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{escape(title)}</title>"
             f"<style>{CSS}</style></head><body><h1>{escape(title)}</h1>",
             f"<p class=\"lead\">{len(records)} discovery point(s): N participants, T topics each; times from the "
             "first participant's go to the last one matched (every reader every writer it should) and sampled "
             "(a sample from every other participant on every topic).</p>",
             f"{html_section(records)}<p>{RESULTS} is the source of truth.</p></body></html>"]
    return "\n".join(parts) + "\n"


def discovery_report(records: list[dict], directory: Path, title: str) -> Path:
    """``directory``/report.html, written whole."""
    target = Path(directory) / REPORT
    write_atomic(target, render_page(records, title))
    return target
