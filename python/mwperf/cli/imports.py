"""``mwperf import perftest|ddsperf FILE``: another tool's output as a run directory."""

from __future__ import annotations

import argparse

__all__ = ["add_parser", "command"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    imp = sub.add_parser("import", help="turn Perftest or ddsperf output into a run directory")
    imp.add_argument("tool", metavar="perftest|ddsperf", help="the tool that wrote FILE")
    imp.add_argument("file", metavar="FILE", help="its output (tables, summary lines, per-second lines)")
    imp.add_argument("--out", metavar="DIR", help="run directory (default: results/import-TOOL-NAME)")
    imp.add_argument("--mw", metavar="NAME", help="middleware name for the records (e.g. connext; default: TOOL)")
    imp.set_defaults(func=command)


def command(ns: argparse.Namespace, argv: list[str]) -> int:
    from mwperf.imports.imported import import_file

    directory, count = import_file(ns.tool, ns.file, ns.out, ns.mw)
    print(f"{count} point(s) from {ns.file} -> {directory}")
    return 0
