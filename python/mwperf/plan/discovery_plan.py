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
or one value); its points are every combination. Discovery goes in a matrix of
its own: its points are participants, not a pair, and share no axis but
``mw`` with the other modes. A sweep plan may hold one or more such matrices in
its ``also`` list (an entry with ``mode: discovery``: the quick plan's
discovery point), measured after its other points into the same run
directory's discovery.jsonl."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from mwperf.errors import PlanError, UnitError, UsageError
from mwperf.plan.plan_file import load_yaml, read_plan_text
from mwperf.plan.where import LinkProfile, parse_link
from mwperf.table import Row, snapshot
from mwperf.units import parse_list

__all__ = ["KEYS", "MODE", "DiscoveryMatrix", "is_discovery_plan", "is_discovery_matrix", "load_discovery_plan",
           "discovery_options", "ROWS", "USER", "parse_lists", "checked_lists", "given_of"]

#: The mode's name: the agent's ``discover`` command's ``discovery`` row names what it measures.
MODE = "discovery"
#: The agent's ``discover`` rows, by name.
ROWS = snapshot().command("discover")
#: The ones a user gives (the others are the controller's: index, nic, peer, server, domain).
USER = tuple(r.name for r in ROWS.rows if r.group != "control" and r.name != "mw")
KEYS = ("mw", "participants", "topics", "discovery", "participants_as", "link", "timeout")


@dataclass(frozen=True)
class DiscoveryMatrix:
    """A discovery matrix of a sweep plan's ``also`` list: its options as command-line text (keys as the
    plan writes them, lists comma-separated) and where it is (``also[i]``, what an error names)."""

    options: Mapping[str, str]
    where: str


def is_discovery_matrix(item: Any) -> bool:
    """An ``also`` entry whose ``mode`` is or holds discovery."""
    modes = item.get("mode") if isinstance(item, dict) else None
    return MODE in (modes if isinstance(modes, list) else [modes])


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
    return discovery_options(source, doc)


def discovery_options(source: str, doc: Mapping, where: str = "") -> dict[str, str]:
    """A discovery matrix's options as command-line text (lists comma-separated); PlanError naming the key
    (inside ``where``, ``also[i]``, when it is not the plan's top level)."""
    def at(key: str) -> str:
        return f"{where}.{key}" if where else key

    modes = doc.get("mode")
    if (modes if isinstance(modes, list) else [modes]) != [MODE]:
        raise PlanError(source, at("mode"), str(modes), f"discovery goes in a {'matrix' if where else 'plan'} of "
                                                        "its own (its points are participants, not a pair): "
                                                        "mode: discovery")
    options = {}
    for key, value in doc.items():
        if key == "mode" or (key == "description" and not where):
            continue
        if key not in KEYS:
            raise PlanError(source, at(str(key)), None, f"not a key of a discovery {'matrix' if where else 'plan'} "
                                                        f"({', '.join(KEYS)})")
        items = value if isinstance(value, list) else [value]
        if not items or any(isinstance(v, (dict, list)) or v is None for v in items):
            raise PlanError(source, at(key), str(value), "expected a value or a list of values")
        options[key] = ",".join(str(v) for v in items)
    return options


def _values(flag: str, row: Row, text: str) -> list:
    try:
        items = parse_list(text)
    except UnitError as exc:
        raise UsageError(flag, text, str(exc)) from None
    try:
        return list(dict.fromkeys(row.parse(item) for item in items))
    except ValueError as exc:
        raise UsageError(flag, text, str(exc)) from None


def parse_lists(given: dict[str, str | None]) -> tuple[list[str], dict[str, list], int]:
    """The middlewares, the lists of the other ``discover`` rows (by name) and the timeout as machine values;
    UsageError naming the bad one (exit 2)."""
    for key in ("mw", "participants"):
        if given.get(key) is None:
            raise UsageError(f"--{key}", None, "required in discovery mode")
    mws = _values("--mw", ROWS["mw"], str(given["mw"]))
    lists = {name: _values(ROWS[name].flag, ROWS[name], str(given[name]) if given.get(name) is not None
                           else ROWS[name].shown(ROWS[name].default)) for name in USER if name != "timeout"}
    timeout = given.get("timeout") or ROWS["timeout"].shown(ROWS["timeout"].default)
    try:
        timeout_ns = ROWS["timeout"].parse(timeout)
    except ValueError as exc:
        raise UsageError("--timeout", timeout, str(exc)) from None
    if given.get("link") is None and "default" in lists["discovery"]:
        raise UsageError("--discovery", "default", "multicasts: it runs only on a namespace pair's link "
                                                   "(--link netns), never on this machine's own network")
    return mws, lists, timeout_ns


def given_of(options: Mapping[str, str]) -> dict[str, str]:
    """A plan's discovery options by their command-line names (``participants-as``)."""
    return {key.replace("_", "-"): value for key, value in options.items()}


def checked_lists(given: dict, plan: str | None = None,
                  where: str = "") -> tuple[list[str], dict[str, list], int, LinkProfile | None]:
    """:func:`parse_lists` and the link; bad input names its option (UsageError) or, of a ``plan``, its key
    (PlanError; ``where``: inside ``also[i]``)."""
    try:
        mws, lists, timeout = parse_lists(given)
        link = parse_link(given["link"]) if given.get("link") is not None else None
    except UsageError as exc:
        if plan is None:
            raise
        key = (exc.option or "").lstrip("-").replace("-", "_") or None
        raise PlanError(plan, f"{where}.{key}" if where and key else where or key, exc.value, exc.reason) from None
    return mws, lists, timeout, link
