"""What several commands share: the program's name, finding the agent, and
what a run makes of its records besides results.jsonl (:func:`run_outputs`)."""

from __future__ import annotations

import os
import sys
from functools import partial
from typing import TYPE_CHECKING, TextIO

from mwperf.description import AgentInfo
from mwperf.errors import UsageError
from mwperf.execute.agent import ENV_AGENT, default_agent_path, describe, find_agent

if TYPE_CHECKING:  # the run loop and the formats are imported by the commands that run, not at start-up
    from mwperf.execute.runner import Outputs

__all__ = ["PROG", "described_agent", "no_agent", "run_outputs"]

PROG = "mwperf"


def _resolve_agent(explicit: str | None) -> str | None:
    """The agent binary, or None when the default one is missing.
    An explicitly named agent (--agent, $MWPERF_AGENT) that is missing is bad input."""
    if explicit:
        agent = find_agent(explicit)
        if agent is None:
            raise UsageError("--agent", explicit, "not found or not executable")
        return agent
    env = os.environ.get(ENV_AGENT)
    agent = find_agent(None)
    if agent is None and env:
        raise UsageError(f"{ENV_AGENT}={env}", None, "not found or not executable")
    return agent


def described_agent(explicit: str | None) -> tuple[str, AgentInfo] | None:
    """The agent and its description of itself; None when it is not built.
    AgentError when it does not answer."""
    agent = _resolve_agent(explicit)
    if agent is None:
        return None
    return agent, describe(agent)


def no_agent() -> int:
    """Say that the agent is not built, and how to build it; the exit code."""
    sys.stderr.write(f"{PROG}: error: agent not found at {default_agent_path()[0]}: build it (make agent, or "
                     f"cmake -S agent -B agent/build && cmake --build agent/build) or pass --agent; "
                     f"what can be asked comes from its description of itself\n")
    return 1


def run_outputs(fmt: str = "text", out: TextIO | None = None, progress: TextIO | None = None,
                verbose: bool = False, stored: bool = False) -> Outputs:
    """What a run, a sweep, a scenario or a search writes besides results.jsonl: results.csv after every
    point, the headline and the warnings (``verbose``: every table before them; ``fmt``: text or md) on
    ``out`` (default stdout) and report.html at the end; where the report is said last, unless the run
    goes into a store (``stored``: :func:`mwperf.cli.db.ingest_after_run` says it after the store's line)."""
    from mwperf.execute.runner import Outputs
    from mwperf.export import run

    return Outputs(after_point=run.after_point, line=run.line,
                   at_end=partial(run.at_end, fmt=fmt, out=out or sys.stdout, progress=progress or sys.stderr,
                                  verbose=verbose, report_line=not stored), verbose=verbose)
