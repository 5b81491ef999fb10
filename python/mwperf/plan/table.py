"""The agent's option table (``mwperf-agent list``'s ``options`` event,
agent/src/core/option_table.cpp): every option declared once, with its kind
and unit, range, choices, default, the adapter capability that gates it, the
modes and roles it applies to, whether it identifies a point, its record
field and its QoS label.

The controller builds its vocabulary from it. ``option-table.json`` next to
this module is a snapshot of the built agent's table (a test keeps the two
equal), so that ``mwperf --help``, completion and reading run directories
work without a built agent; regenerate it with::

    agent/build/mwperf-agent list | python -m mwperf.plan.table > python/mwperf/plan/option-table.json
"""

from __future__ import annotations

import json
import sys
from functools import lru_cache
from importlib import resources

__all__ = ["SNAPSHOT_FILE", "snapshot_event", "dump_event"]

SNAPSHOT_FILE = "option-table.json"


@lru_cache(maxsize=1)
def snapshot_event() -> dict:
    """The checked-in snapshot of the agent's ``options`` event."""
    return json.loads(resources.files(__package__).joinpath(SNAPSHOT_FILE).read_text(encoding="utf-8"))


def dump_event(event: dict) -> str:
    """The event as the snapshot keeps it: one row a line (a change to a row is a one-line diff)."""
    parts = []
    for key, value in event.items():
        if isinstance(value, list):
            items = ",\n".join(f"  {json.dumps(v, ensure_ascii=False)}" for v in value)
            parts.append(f"{json.dumps(key)}: [\n{items}\n]")
        else:
            parts.append(f"{json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}")
    return "{" + ",\n".join(parts) + "}\n"


def _main() -> int:
    """``mwperf-agent list`` on stdin -> the snapshot on stdout."""
    for line in sys.stdin:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("event") == "options":
            sys.stdout.write(dump_event(event))
            return 0
    sys.stderr.write("no options event on stdin (pipe `mwperf-agent list` in)\n")
    return 2


if __name__ == "__main__":
    sys.exit(_main())
