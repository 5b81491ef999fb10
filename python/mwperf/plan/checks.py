"""The generic checks the option table drives, as the agent makes them
(agent/src/core/description.cpp), before anything runs:

* :func:`parse_values`: each given option's items as machine values (its
  kind, range and choices; the words of an adapter capability come from the
  adapters that have it);
* :func:`refused_option`: an option a middleware cannot honour (the
  capability that gates it), named with the middleware;
* :func:`refused_point`: a point's value above an adapter's limit, or two
  values that cannot go together (the table's limit and conflict rules).

A refusal is one line naming the option, the value and the middleware
(``--async: not supported by cyclonedds (no asynchronous publishing)``).
"""

from __future__ import annotations

from typing import Any, Mapping

from mwperf.description import AdapterInfo, AgentInfo
from mwperf.errors import Unsupported, UsageError
from mwperf.plan.options import TestPoint
from mwperf.table import OptionTable, Row

__all__ = ["parse_values", "refused_option", "refused_point", "asks", "DEFAULT_WORD"]

#: ``--transport default``: the middleware's own (for an option whose default is the adapter's).
DEFAULT_WORD = "default"


def _item(row: Row, item: Any, agent: AgentInfo) -> Any:
    if row.kind == "choice" and row.choices is None and row.capability is not None:
        words = agent.vocabulary(row.capability)
        text = str(item).strip().lower().replace("_", "-")
        if text == DEFAULT_WORD and row.default is None:
            return None
        if text not in words:
            raise UsageError(row.flag, str(item), f"choose from {', '.join((*words, DEFAULT_WORD)) or 'none'}")
        return text
    try:
        return row.parse(item)
    except ValueError as exc:
        raise UsageError(row.flag, None if isinstance(item, bool) else str(item), str(exc)) from None


def parse_values(table: OptionTable, raw: Mapping[str, tuple], agent: AgentInfo) -> dict[str, tuple]:
    """Every given option of the table, its items as machine values (written
    twice, as 1k and 1024, once); UsageError naming the option and the item."""
    out: dict[str, tuple] = {}
    for name, items in raw.items():
        row = table.get(name)
        if row is None or not row.user:
            raise UsageError(f"--{name}", None, "not an option of mwperf run")
        out[name] = tuple(dict.fromkeys(_item(row, item, agent) for item in items))
    return out


def asks(row: Row, value: Any) -> bool:
    """Whether ``value`` asks the middleware for something (its default does not)."""
    return value is not None and value != row.default


def refused_option(table: OptionTable, given: Mapping[str, tuple], info: AdapterInfo) -> Unsupported | None:
    """The first given option ``info``'s middleware cannot honour; None if it honours them all."""
    for row in table.user_rows:
        if row.capability is None:
            continue
        for value in given.get(row.name, ()):
            if not asks(row, value):
                continue
            shown = None if row.kind == "flag" else row.shown(value)
            if not info.honours(row.capability):
                reason = info.refusals.get(row.capability) or row.refusal
                why = f" ({reason})" if reason else ""
                return Unsupported(row.flag, shown, f"not supported by {info.name}{why}", info.name)
            words = info.choices(row.capability)
            if words and row.argv(value) not in words:
                return Unsupported(row.flag, shown, f"not supported by {info.name} (choose from: {', '.join(words)})",
                                   info.name)
    return None


def refused_point(table: OptionTable, point: TestPoint, info: AdapterInfo) -> Unsupported | None:
    """A value of the point above ``info``'s limit, or two that cannot go together."""
    for rule in table.limits:
        row = table.get(str(rule.get("option")))
        if row is None or (rule.get("when") and point.get(str(rule["when"])) != rule.get("is")):
            continue
        value, limit = point.get(row.name), info.limit(str(rule.get("limit")))
        if limit and isinstance(value, int) and value > limit:
            note = info.limit_notes.get(str(rule.get("limit")))
            text = str(rule.get("text", "")).replace("{limit}", str(limit))
            return Unsupported(row.flag, row.shown(value), f"{info.name} {text}" + (f": {note}" if note else ""),
                               info.name)
    for rule in table.conflicts:
        first, other = table.get(str(rule.get("option"))), table.get(str(rule.get("other")))
        if first is None or other is None:
            continue
        if point.get(first.name) == rule.get("value") and point.get(other.name) == rule.get("other_value"):
            return Unsupported(first.flag, str(rule.get("value")), f"{rule.get('text')} ({info.name})", info.name)
    return None
