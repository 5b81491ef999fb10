"""Command line: ``mwperf run | sweep | max-rate | floor | hosts | lab | doctor | report | ls |
baseline | compare | history | check | db | export | import | bundle | completion``, one module per command in this
folder.

A thin layer: parse -> validate into typed options -> run -> export. Every
error is mapped to what the user sees here, in :func:`main`, and only here:
bad input (:class:`mwperf.errors.BadInput`) is one line on stderr
(``mwperf: error: ...``) and exit code 2, never a traceback; an agent that
does not answer is one line and exit code 1. Each command imports what it
drives when it runs, so that ``mwperf --help`` stays quick.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import NoReturn, Sequence

from mwperf.version import __version__
from mwperf.cli import (baseline, bundle, check, compare, completion, db, doctor, export, floor, history,
                        hosts, imports, lab, ls, max_rate, report, run, sweep)
from mwperf.cli.common import PROG
from mwperf.display import PrintableStream, printable
from mwperf.errors import AgentError, BadInput

__all__ = ["main", "build_parser"]

#: In the order ``mwperf --help`` lists them.
COMMANDS = (run, sweep, max_rate, floor, hosts, lab, doctor, report, ls, baseline, compare, history, check,
            db, export, imports, bundle, completion)

EXAMPLES = """examples:
  mwperf run --mw udp,cyclonedds --mode latency --size 32,1k,63000 --duration 5s
  mwperf run --mw fastdds --mode rate --rate 100,1000 --size 1k --out results/mine
  mwperf sweep plans/rate-matrix.yaml --dry-run        the points a plan expands to
  mwperf sweep plans/rate-matrix.yaml --out results/matrix
  mwperf max-rate --mw udp --size 1k --loss 1% --link netns:rate=10mbit   the highest rate at <= 1 % loss
  mwperf sweep plan.yaml --inventory lab.yml --pairs laptop:pi   a plan between the hosts of a lab
  mwperf ls results/                                   the runs: date, points, command
  mwperf report results/mine                           tables again; report.html (open it in a browser)
  mwperf report results/mine --format svg              every figure as results/mine/plots/*.svg
  mwperf compare results/before results/after --fail-if-slower 5
  mwperf db ingest results/*/                          runs into the results store (results/mwperf.duckdb)
  mwperf history --mw cyclonedds --size 1k             a point over time, change points marked
  mwperf check budgets.yaml results/mine               budgets as a CI gate (exit 1 when one is broken)
  mwperf export results/matrix --format parquet        for pandas, DuckDB, Arrow
  mwperf import perftest connext-tables.txt --mw connext
  mwperf floor --cpu 0,0 --cpu 0,1 --size 32,63000     what no middleware can beat here
  mwperf doctor                                        adapters, wake-up cost, kernel knobs
  source <(mwperf completion bash)                     tab completion

In Python: import mwperf; df = mwperf.load("results/mine")   (a pandas DataFrame, one row per point)
Each command has its own --help (mwperf run --help)."""


class OneLineParser(argparse.ArgumentParser):
    """argparse whose errors are one line: ``mwperf: error: ...``, exit 2."""

    def error(self, message: str) -> NoReturn:
        text = " ".join(message.split())
        sys.stderr.write(f"{PROG}: error: {text}\n")
        raise SystemExit(2)


def build_parser() -> OneLineParser:
    parser = OneLineParser(
        prog=PROG,
        description="Measure publish/subscribe middleware latency, throughput and loss.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    parser.set_defaults(root_parser=parser)  # `completion` writes its script from the whole parser
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def _glue_dash_values(parser: argparse.ArgumentParser, args: list[str]) -> list[str]:
    """``--warmup -1s`` -> ``--warmup=-1s`` so that argparse hands the bad
    value to our validation (which names it) instead of calling it an option."""
    takes_value: set[str] = set()
    known: set[str] = set()
    parsers = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            parsers += list(action.choices.values())
    for each in parsers:
        for action in each._actions:
            known.update(action.option_strings)
            if action.option_strings and action.nargs is None and action.const is None and not isinstance(
                    action, (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse._VersionAction,
                             argparse._HelpAction)):
                takes_value.update(action.option_strings)
    out: list[str] = []
    i = 0
    while i < len(args):
        token = args[i]
        if (token in takes_value and i + 1 < len(args) and args[i + 1].startswith("-")
                and args[i + 1] != "--" and args[i + 1].split("=", 1)[0] not in known):
            out.append(f"{token}={args[i + 1]}")
            i += 2
            continue
        out.append(token)
        i += 1
    return out


def _undecodable(args: list[str]) -> str | None:
    """The first argument that is not UTF-8 text (bytes the locale could not
    decode), as its bytes would be written; None when every one is."""
    for arg in args:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            try:
                return repr(os.fsencode(arg))[1:]
            except UnicodeEncodeError:
                return ascii(arg)
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (``sys.exit(main())``). What it
    prints on stdout and stderr is :func:`~mwperf.display.printable` (a record
    field or a directory name cannot drive the terminal)."""
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = (s if isinstance(s, PrintableStream) else PrintableStream(s) for s in streams)
    try:
        return _main(argv)
    finally:
        if isinstance(sys.stdout, PrintableStream) and sys.stdout.raw is streams[0]:
            sys.stdout = streams[0]
        if isinstance(sys.stderr, PrintableStream) and sys.stderr.raw is streams[1]:
            sys.stderr = streams[1]


def _error(message: str) -> None:
    sys.stderr.write(f"{PROG}: error: {printable(' '.join(message.split()))}\n")


def _main(argv: Sequence[str] | None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    command_line = list(sys.argv) if argv is None else [PROG, *args]
    bad = _undecodable(args)
    if bad is not None:  # it would go into run.json and the records, which are UTF-8
        _error(f"{bad}: not UTF-8 text (mwperf keeps its command line and paths as UTF-8); rename it")
        return 2
    parser = build_parser()
    try:
        ns = parser.parse_args(_glue_dash_values(parser, args))
    except SystemExit as exc:  # --help, --version, or a parse error already printed
        return exc.code if isinstance(exc.code, int) else 0
    if not getattr(ns, "func", None):
        sys.stderr.write(f"{PROG}: error: a command is required: run, sweep, max-rate, floor, hosts, doctor, report, "
                         "ls, baseline, compare, history, check, db, export, import, bundle or completion "
                         "(see mwperf --help)\n")
        return 2
    try:
        return ns.func(ns, command_line)
    except BadInput as exc:
        _error(str(exc))
        return 2
    except AgentError as exc:
        _error(f"the agent does not work: {exc}")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG}: interrupted\n")
        return 130
    except BrokenPipeError:  # e.g. `mwperf report DIR | head`
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 1
