"""A sweep plan in discovery mode (``mwperf sweep FILE`` with ``mode:
discovery``), e.g. plans/discovery.yaml::

    description: discovery as participants and topics grow
    mode: discovery
    mw: [cyclonedds, fastdds]
    participants: [2, 5, 10, 20]
    topics: [1, 10]
    discovery: [default, tuned]
    link: netns

Each key is ``mwperf run --mode discovery``'s option of the same name (a list
or one value); its points are every combination. Discovery goes in a plan of
its own: its points are participants, not a pair, and share no axis but
``mw`` with the other modes."""

from __future__ import annotations

import re
from pathlib import Path

from mwperf.errors import PlanError
from mwperf.plan.plan_file import load_yaml, read_plan_text

__all__ = ["KEYS", "MODE", "is_discovery_plan", "load_discovery_plan"]

#: The mode's name: the agent's ``discover`` command's ``discovery`` row names what it measures.
MODE = "discovery"
KEYS = ("mw", "participants", "topics", "discovery", "participants_as", "link", "timeout")


def is_discovery_plan(path: str | Path) -> bool:
    """A plan file whose top-level ``mode`` is discovery (one value or a list that holds it); PlanError when
    it cannot be read as a plan (read bounded: a device or a FIFO is refused, never read whole)."""
    text = read_plan_text(path, str(path))
    return re.search(r"^mode:\s*(\[[^\]]*\b|)discovery\b", text, re.M) is not None


def load_discovery_plan(path: str | Path) -> dict[str, str]:
    """The plan's options as command-line text (lists comma-separated); PlanError naming the key."""
    source = str(path)
    doc = load_yaml(read_plan_text(path, source), source)
    if not isinstance(doc, dict):
        raise PlanError(source, None, None, "a plan is a mapping of mwperf run's options")
    modes = doc.get("mode")
    if (modes if isinstance(modes, list) else [modes]) != [MODE]:
        raise PlanError(source, "mode", str(modes), "discovery goes in a plan of its own (its points are "
                                                    "participants, not a pair): mode: discovery")
    options = {}
    for key, value in doc.items():
        if key in ("mode", "description"):
            continue
        if key not in KEYS:
            raise PlanError(source, key, None, f"not a key of a discovery plan ({', '.join(KEYS)})")
        items = value if isinstance(value, list) else [value]
        if not items or any(isinstance(v, (dict, list)) or v is None for v in items):
            raise PlanError(source, key, str(value), "expected a value or a list of values")
        options[key] = ",".join(str(v) for v in items)
    return options
