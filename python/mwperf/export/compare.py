"""``mwperf compare``'s answer as text: per run against the baseline, one row
per point they share (the comparison itself is :mod:`mwperf.analysis.compare`'s),
then each gate that failed, then each that could not decide."""

from __future__ import annotations

import sys
from typing import TextIO

from mwperf.analysis.compare import Comparison, Compared, History, Pairing, compare
from mwperf.export.terminal import table_text
from mwperf.model.launches import spread_text

__all__ = ["compare_runs", "comparison_text", "HEADERS"]

HEADERS = ["point", "p50 A (us)", "p50 B (us)", "B/A", "p50 difference", "spread A", "spread B", "S/s A",
           "S/s B", "B/A", "loss A", "loss B", "unlike (A vs B)"]


def _fmt(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _loss(value: float | None) -> str:
    return _fmt(None if value is None else 100 * value, 2) + "%"


def _row(c: Compared) -> list[str]:
    return [c.key.label, _fmt(c.p50[0]), _fmt(c.p50[1]), _fmt(c.p50_ratio, 2), c.difference, spread_text(c.spread[0]),
            spread_text(c.spread[1]), _fmt(c.samples_per_s[0], 0), _fmt(c.samples_per_s[1], 0),
            _fmt(c.samples_per_s_ratio, 2), _loss(c.loss_rate[0]), _loss(c.loss_rate[1]), "; ".join(c.unlike) or "-"]


def _pairing_text(p: Pairing) -> str:
    forced = f" [forced: {p.forced}]" if p.forced else ""
    text = f"== {p.other} vs {p.base} (baseline){forced}\n"
    text += table_text(HEADERS, [_row(c) for c in p.points], left=(0, 4, 12))
    text += ("(p50 difference: B vs A and its 90 % interval, a t test on the launches' log p50; spread: between "
             "launches / within a launch, as shares of p50, and the launches)\n")
    if p.missing:
        text += f"({len(p.missing)} baseline point(s) not in {p.other})\n"
    return text + "\n"


def comparison_text(comparison: Comparison) -> str:
    """Each pairing's table, then a line per gate that failed (``REGRESSION: ...``) or could not
    decide (``CANNOT DECIDE: ...``)."""
    return "".join(map(_pairing_text, comparison.pairings)) + "".join(
        f"{line}\n" for line in comparison.failures + comparison.undecided)


def compare_runs(dirs: list[str], out: TextIO, *, fail_if_slower: float | None = None,
                 fail_if_lossier: float | None = None, force: bool = False, err: TextIO | None = None,
                 history: History | None = None, versions: list[str] | None = None) -> int:
    """Each run after the first against the first; the tables to ``out``,
    unusable records named on ``err`` (default stderr). Exit code: 1 when a
    gate fails, else 3 when one cannot decide, else 0."""
    err = err or sys.stderr
    comparison = compare(dirs, fail_if_slower=fail_if_slower, fail_if_lossier=fail_if_lossier, force=force,
                         warn=lambda m: err.write(f"mwperf: warning: {m}\n"), history=history, versions=versions)
    out.write(comparison_text(comparison))
    return comparison.exit_code
