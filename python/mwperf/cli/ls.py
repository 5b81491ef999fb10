"""``mwperf ls [DIR]``: the runs under DIR (default results/), oldest first:
their date, status, points (ok and failed: the usable records of
results.jsonl), a scenario run's scenario (its points and its flows'
records, together and alone) and the command that made them. Every file is read as
untrusted input (mwperf.results.rundir) and every value printed escaped."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from pathlib import Path

from mwperf.errors import UsageError
from mwperf.results.rundir import shown

__all__ = ["add_parser", "command", "list_runs", "Run"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    ls = sub.add_parser("ls", help="list the runs in a results folder (date, points, command)",
                        description="List the run directories under DIR (default: results): when they started, "
                                    "their status, how many points were measured (ok, failed) and the command.",
                        epilog="example:\n  mwperf ls results/", formatter_class=argparse.RawDescriptionHelpFormatter)
    ls.add_argument("dir", metavar="DIR", nargs="?", default="results", help="a folder of run directories, or one")
    ls.set_defaults(func=command)


class Run:
    """One run directory as ``ls`` shows it, read as untrusted input (bounded,
    no FIFO or device, records checked against the schema: only usable
    records count)."""

    def __init__(self, path: Path):
        from mwperf.results.rundir import RunDir, read_records

        from mwperf.errors import Refused

        self.path = path
        self.doc = RunDir(path).read_run_json() or {}  # 'running' with no live writer reads 'killed'
        self.refused: str | None = None  # why the loader refused its records (a forged or repeated launch)
        try:
            records = read_records(path)
        except Refused as exc:
            records, self.refused = [], str(exc)
        statuses = [r.status for r in records]
        self.ok, self.failed = statuses.count("ok"), statuses.count("failed")
        self.scenarios: dict[str, tuple[set, int]] = {}  # a scenario's name: its points, its flows' records
        for r in records:
            s = r.scenario
            if s is not None:
                points, flows = self.scenarios.get(s.name, (set(), 0))
                self.scenarios[s.name] = (points | {(s.hash, s.point)}, flows + 1)

    @property
    def scenario(self) -> str:
        """``robot-mobile: 3 points, 42 flow records`` (empty for a run without scenario)."""
        return shown("; ".join(f"{name}: {len(points)} point{'s' if len(points) != 1 else ''}, {flows} flow "
                               f"record{'s' if flows != 1 else ''}" for name, (points, flows) in
                               self.scenarios.items()), 200)

    @property
    def started(self) -> datetime:
        text = self.doc.get("started")
        if isinstance(text, str):
            try:
                when = datetime.fromisoformat(text.replace("Z", "+00:00"))
                return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)
            except ValueError:
                pass
        from mwperf.results.rundir import RESULTS_JSONL, RUN_JSON

        for name in (RESULTS_JSONL, RUN_JSON):
            try:
                return datetime.fromtimestamp((self.path / name).lstat().st_mtime, timezone.utc)
            except (OSError, ValueError, OverflowError):
                continue
        return datetime.fromtimestamp(0, timezone.utc)

    @property
    def status(self) -> str:
        return "refused" if self.refused else shown(self.doc.get("status") or "-", 20)

    @property
    def command(self) -> str:
        imported = self.doc.get("imported")
        if isinstance(imported, dict):
            return shown(f"mwperf import {imported.get('tool')} {imported.get('file')}", 200)
        argv = self.doc.get("command")
        if isinstance(argv, list) and argv:
            return shown(" ".join(["mwperf", *[str(a) for a in argv[1:]]]), 200)
        return "-"


def list_runs(directory: Path) -> list[Run]:
    """The run directories in ``directory`` (or ``directory`` itself), oldest first."""
    from mwperf.results.rundir import RESULTS_JSONL, RUN_JSON

    def is_run(p: Path) -> bool:
        return (p / RESULTS_JSONL).is_file() or (p / RUN_JSON).is_file()

    if is_run(directory):
        candidates = [directory]
    else:
        candidates = [p for p in directory.iterdir() if p.is_dir() and is_run(p)]
    return sorted((Run(p) for p in candidates), key=lambda r: (r.started, r.path.name))


def command(ns: argparse.Namespace, argv: list[str]) -> int:
    from mwperf.export.terminal import table_text

    directory = Path(ns.dir)
    if not directory.is_dir():
        raise UsageError("ls", ns.dir, "no such folder")
    runs = list_runs(directory)
    if not runs:
        print(f"no run in {ns.dir} (a run directory holds results.jsonl)", file=sys.stderr)
        return 0
    scenarios = any(r.scenarios for r in runs)
    rows = [[shown(str(r.path), 200), r.started.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), r.status,
             "-" if r.refused else str(r.ok + r.failed), str(r.failed) if r.failed else "",
             *([r.scenario] if scenarios else []), r.command] for r in runs]
    for r in runs:  # its numbers are not shown: why, one line each
        if r.refused:
            print(f"mwperf: warning: {r.refused}", file=sys.stderr)
    headers = ["run", "started", "status", "points", "failed", *(["scenario"] if scenarios else []), "command"]
    sys.stdout.write(table_text(headers, rows, left=(0, 1, 2, *range(5, len(headers)))))
    return 0
