"""A discovery plan (``mwperf discovery --plan FILE``): a top-level
``discovery:`` mapping of the command's lists, e.g. plans/discovery.yaml::

    discovery:
      mw: [cyclonedds, fastdds]
      participants: [2, 5, 10, 20]
      topics: [1, 10]
      discovery: [default, tuned]
      link: netns

Each key is the option of the same name (a list or one value); an option
given on the command line wins. Not a sweep plan: ``mwperf sweep`` runs
those."""

from __future__ import annotations

import re
from pathlib import Path

from mwperf.errors import PlanError
from mwperf.plan.plan_file import load_yaml, read_plan_text

__all__ = ["KEYS", "is_discovery_plan", "load_discovery_plan"]

KEYS = ("mw", "participants", "topics", "discovery", "link", "timeout")


def is_discovery_plan(path: str | Path) -> bool:
    """A file of plans/ that is a discovery plan (a top-level ``discovery:``), not a sweep plan."""
    return re.search(r"^discovery:", Path(path).read_text(encoding="utf-8", errors="replace"), re.M) is not None


def load_discovery_plan(path: str | Path) -> dict[str, str]:
    """The plan's options as command-line text (lists comma-separated); PlanError naming the key."""
    source = str(path)
    doc = load_yaml(read_plan_text(path, source), source)
    if not isinstance(doc, dict) or set(doc) != {"discovery"} or not isinstance(doc["discovery"], dict):
        raise PlanError(source, None, None, "a discovery plan is one mapping, 'discovery:'")
    options = {}
    for key, value in doc["discovery"].items():
        if key not in KEYS:
            raise PlanError(source, f"discovery.{key}", None, f"not a key of a discovery plan ({', '.join(KEYS)})")
        items = value if isinstance(value, list) else [value]
        if not items or any(isinstance(v, (dict, list)) or v is None for v in items):
            raise PlanError(source, f"discovery.{key}", str(value), "expected a value or a list of values")
        options[key] = ",".join(str(v) for v in items)
    return options
