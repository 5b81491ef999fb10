"""What a run shows and writes of its records besides results.jsonl, in the
three moments the runner gives (:class:`mwperf.execute.runner.Outputs`;
:func:`mwperf.cli.common.run_outputs` puts them together):

* after every point, results.csv from every record so far (:func:`after_point`);
* each point's progress line (:func:`line`: a point's summary, a scenario step's flows);
* at the end, to the terminal: the headline (with ``verbose``, every table
  first) and the warnings, then how many points' intervals from their launches
  reached the precision asked and what the others would need
  (:func:`launch_summary`), what a point's own adaptive stop saved (each one line of
  at most 100 columns; ``verbose``: in full) and where it all is: report.html last
  (:func:`at_end`; the run directory only where there is no report, or with ``verbose``); a sweep's
  discovery points (discovery.jsonl) a line each before them (``verbose``, md: their tables).
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import TextIO

from mwperf.display import printable
from mwperf.export.advice import warnings_for
from mwperf.export.csv import ResultsCsv
from mwperf.export.discovery_report import all_sections, compact_lines, read_discovery
from mwperf.export.headline_text import WIDTH
from mwperf.export.html import HtmlReport
from mwperf.export.ranking import size_text
from mwperf.export.scenario import flows_summary
from mwperf.export.tables import Tables, format_seconds, point_summary, render_markdown, render_text
from mwperf.model.labels import point_id
from mwperf.model.launches import as_points
from mwperf.model.record import Record
from mwperf.results.rundir import RunDir
from mwperf.units import format_rate_hz

__all__ = ["after_point", "line", "at_end", "adaptive_saving", "launch_summary", "samples_errors"]


def after_point(records: list[Record], rundir: RunDir) -> list[Path]:
    """results.csv, regenerated from the records in hand (what results.jsonl holds)."""
    return ResultsCsv().write(records, rundir)


def line(records: list[Record]) -> str:
    """The tail of a progress line: one point's summary, or a scenario step's flows'."""
    return point_summary(records[0]) if len(records) == 1 else flows_summary(records)


def at_end(everything: list[Record], records: list[Record], rundir: RunDir, *, fmt: str, out: TextIO,
           progress: TextIO, verbose: bool = False, report_line: bool = True) -> None:
    """The headline (``verbose``: every table before it) and the warnings, the adaptive stop's saving, and
    where it all is: the run directory, and report.html last (unless not ``report_line``: a run that goes
    into a store has it said after the store's line)."""
    html = None
    compact = fmt == "text" and not verbose  # one screen of at most WIDTH columns
    if everything:
        if not compact:
            out.write("\n")
        Tables(fmt, out, verbose=verbose).write(everything, rundir)
        warnings = warnings_for(everything, rundir.read_run_json()) + samples_errors(everything)
        if warnings:
            out.write("\n" + "".join(printable(_wrapped(f"warning: {w}", compact)) + "\n" for w in warnings))
        try:
            (html,) = HtmlReport().write(everything, rundir)
        except OSError as exc:
            progress.write(f"mwperf: warning: cannot write report.html: {exc.strerror or exc}\n")
    found = read_discovery(rundir.path, lambda m: progress.write(f"mwperf: warning: {m}\n"))
    if found and not compact:
        out.write("\n" + (render_markdown if fmt == "md" else render_text)(all_sections(found)))
    said = (compact_lines(found) if compact else []) + [
        x for x in (launch_summary(everything, verbose), adaptive_saving(_own_stops(records), verbose)) if x]
    if html is None or verbose:  # the report's path says where the results are
        said.append(f"results: {rundir.path}")
    out.write(("" if compact and everything else "\n") + "".join(f"{x}\n" for x in said)
              + (f"report: {html}\n" if html and report_line else ""))
    out.flush()


def samples_errors(records: list[Record]) -> list[str]:
    """A warning a point whose agent could not write its samples file, naming the point and why."""
    out = []
    for r in records:
        if r.samples_error:
            where = " ".join(x for x in (r.pair_name, r.mode, size_text(r.size),
                                         f"at {format_rate_hz(r.rate_hz)} Hz" if r.rate_hz else "") if x)
            launch = "" if r.repetition is None else f", launch {r.repetition + 1}"
            out.append(f"point {r.point} ({where}{launch}): no samples file ({r.samples_error}); the report's "
                       "histogram and time series lack it, its figures are whole")
    return out


def _wrapped(text: str, compact: bool) -> str:
    """A warning on lines of at most :data:`WIDTH` columns, the next ones indented (``compact``), or as it is."""
    return "\n".join(textwrap.wrap(text, WIDTH, subsequent_indent="  ", break_on_hyphens=False)) if compact else text


def _own_stops(records: list[Record]) -> list[Record]:
    """The records whose own adaptive stop is their point's: no launches, or a point of one launch."""
    launches: dict[tuple[object, ...], int] = {}
    for r in records:
        if r.repetition is not None:
            key = (r.run_id, point_id(r))
            launches[key] = launches.get(key, 0) + 1
    return [r for r in records if r.repetition is None or launches[(r.run_id, point_id(r))] == 1]


def launch_summary(records: list[Record], verbose: bool = True) -> str | None:
    """How many points' intervals from their launches are within the precision asked, and how many
    more launches (and seconds) the others would need, as one line (not ``verbose``: of at most 100
    columns); None where no point asked one."""
    heads = [(p, p.launches.headline) for p in as_points(records) if p.launches is not None]
    asked = [(p, h) for p, h in heads if h is not None and h.precision and h.reached is not None]
    if not asked:
        return None
    within = {f"±{100 * (h.precision or 0):g} %" for _, h in asked}
    short = [h for _, h in asked if not h.reached]
    if not verbose:
        more = sorted(h.more_launches or 0 for h in short)
        return (f"launches: {len(asked) - len(short)}/{len(asked)} points within {', '.join(sorted(within))}"
                + (f"; the other {len(short)} would need ~{more[len(more) // 2]} more launches (median), "
                   f"{format_seconds(sum(h.more_s or 0.0 for h in short))}" if short else ""))
    text = (f"launches: {len(asked) - len(short)} of {len(asked)} points' intervals within "
            f"{', '.join(sorted(within))} (each point's headline from its launches)")
    more = sorted(h.more_launches or 0 for h in short)
    if more:
        seconds = sum(h.more_s or 0.0 for h in short)
        text += (f"; the other {len(short)} would need {more[len(more) // 2]} more launches (median; up to "
                 f"{more[-1]}), {format_seconds(seconds)} in all")
    return text


def adaptive_saving(records: list[Record], verbose: bool = True) -> str | None:
    """The time the adaptive stop saved against the same points at their full
    (maximum) duration, as one line (not ``verbose``: of at most 100 columns);
    None when no point was adaptive."""
    adaptive = [(r, r.adaptive, r.elapsed_s, r.duration_s or 0.0) for r in records
                if r.adaptive is not None and r.elapsed_s is not None]
    if not adaptive:
        return None
    full = sum(duration for _, _, _, duration in adaptive)
    used = sum(min(elapsed, duration) for _, _, elapsed, duration in adaptive)
    converged = sum(1 for _, a, _, _ in adaptive if a.converged_after_s is not None)
    pct = 100.0 * (full - used) / full if full else 0.0
    short = [a for _, a, _, _ in adaptive if a.converged_after_s is None]
    needs = sorted(a.needed_s for a in short if a.needed_s is not None)
    if not verbose:
        return (f"adaptive stop: {converged}/{len(adaptive)} points within precision, "
                f"{format_seconds(full - used)} saved ({pct:.0f} %)"
                + (f"; others need ~{format_seconds(needs[len(needs) // 2])} (median)" if needs else ""))
    text = (f"adaptive duration: {converged}/{len(adaptive)} points reached their precision; measured "
            f"{used:.1f} s instead of {full:.1f} s at fixed duration (saved {full - used:.1f} s, {pct:.0f} %)")
    if needs:  # what the others would need, from their own batches
        text += (f"; the other {len(short)} would need ~{format_seconds(needs[len(needs) // 2])} (median of "
                 f"{len(needs)}), up to {format_seconds(needs[-1])}")
    if len(needs) < len(short):
        text += f"; {len(short) - len(needs)} without an interval to extrapolate from (see adaptive.needed_note)"
    return text
