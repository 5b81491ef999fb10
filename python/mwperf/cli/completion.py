"""``mwperf completion bash|zsh``: a shell completion script for every
command and option (shtab writes it from the parser), e.g.

    mwperf completion bash > /etc/bash_completion.d/mwperf
    source <(mwperf completion bash)
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["add_parser", "command"]

SHELLS = ("bash", "zsh")


def add_parser(sub: argparse._SubParsersAction) -> None:
    comp = sub.add_parser("completion", help="print a shell completion script (bash, zsh)",
                          description="Print the completion script of mwperf for a shell.",
                          epilog="examples:\n  source <(mwperf completion bash)\n"
                                 "  mwperf completion bash > /etc/bash_completion.d/mwperf",
                          formatter_class=argparse.RawDescriptionHelpFormatter)
    comp.add_argument("shell", choices=SHELLS, help="the shell")
    comp.set_defaults(func=command)


def _paths(parser: argparse.ArgumentParser) -> None:
    """Folders where a command wants a run directory, files where it wants a file."""
    import shtab

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                _paths(child)
            continue
        metavar = action.metavar if isinstance(action.metavar, str) else ""
        if metavar == "DIR":
            action.complete = shtab.DIRECTORY  # type: ignore[attr-defined]  # shtab reads it off the action
        elif metavar in ("FILE", "PATH", "PLAN.yaml"):
            action.complete = shtab.FILE  # type: ignore[attr-defined]


def command(ns: argparse.Namespace, argv: list[str]) -> int:
    import shtab

    parser = ns.root_parser  # the whole command line, as cli.main built it
    _paths(parser)
    sys.stdout.write(shtab.complete(parser, shell=ns.shell))
    return 0
