"""The agent's option table (``mwperf-agent list``'s ``options`` event,
agent/src/core/option_table.cpp): every option declared once, with its kind
and unit, range, choices, default, the adapter capability that gates it, the
modes and roles it applies to, whether it identifies a point, its record
field and its QoS label. The controller builds its command line, sweep keys,
point keys, the agents' arguments, refusals, records, labels and CSV columns
from it (:class:`Row`), never from a copy.

``option-table.json`` next to this module is a snapshot of the built agent's
table (a test keeps the two equal), so that ``mwperf --help``, completion and
reading run directories work without a built agent; regenerate it with::

    agent/build/mwperf-agent list | python -m mwperf.table > python/mwperf/option-table.json
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
from typing import Any

from mwperf.errors import UnitError
from mwperf.units import (AboveBound, format_duration_ns, format_rate_hz, format_size, parse_duration_ns,
                          parse_rate_hz, parse_size)

__all__ = ["Row", "OptionTable", "snapshot", "snapshot_event", "dump_event", "SNAPSHOT_FILE", "MODES"]

SNAPSHOT_FILE = "option-table.json"
#: Every mode (a row that applies to all of them lists them all).
MODES = ("latency", "throughput", "rate", "burst")
#: A record field's unit, by its name's ending: the factor from the option's machine unit (ns).
_RECORD_SCALE = {"_s": 1e9, "_ms": 1e6, "_us": 1e3}


@dataclass(frozen=True)
class Row:
    """One option as the agent declares it (see agent/src/core/option_table.h)."""

    name: str
    kind: str
    unit: str
    group: str                          # point, qos, measure, control
    min: float | None
    max: float | None
    choices: tuple[str, ...] | None     # the value must be one of these (None: any, or the adapter's list)
    default: Any                        # machine value; None: none (the adapter's own)
    capability: str | None              # the adapter capability that gates it
    refusal: str | None                 # why an adapter without it refuses the option
    modes: tuple[str, ...]
    roles: tuple[str, ...]
    command: str
    required: bool
    point_key: bool
    record: str | None                  # its field in the record ("qos.history")
    label: str | None                   # its part of a QoS label ("keyed {}")
    label_default: bool                 # the label shows the default value too
    help: str
    item: str | None = None             # a list's: what each item is (its range, choices and unit are the row's)
    items: tuple[int, int] = (1, 1)     # a list's: how many items
    pair: bool = False                  # may change between the points of one agent pair (--reuse, `next`)

    @property
    def flag(self) -> str:
        return f"--{self.name}"

    @property
    def key(self) -> str:
        """Its name in a plan, in Python and in the agent's JSON: ``latency_count``."""
        return self.name.replace("-", "_")

    @property
    def user(self) -> bool:
        """An option of ``mwperf run`` (the others are the controller's to set)."""
        return self.group != "control" and self.command == "run"

    def applies(self, mode: str) -> bool:
        return mode in self.modes

    def for_role(self, role: str) -> bool:
        return role in self.roles

    @property
    def every_mode(self) -> bool:
        return set(self.modes) == set(MODES)

    # -- values ------------------------------------------------------------------
    def parse(self, text: Any) -> Any:
        """The user's text (``5s``, ``1k``, ``5%``, ``keep-last:4``) as a machine
        value; ValueError with the reason (one phrase) when it is not one."""
        if self.kind == "flag":
            if isinstance(text, bool):
                return text
            raise ValueError("expected true or false")
        if self.kind == "list":
            return self._list(text)
        raw = str(text).strip()
        try:
            if self.kind == "bytes":
                value: Any = parse_size(raw)
            elif self.kind == "ns":
                value = parse_duration_ns(raw, allow_zero=(self.min or 0) <= 0)
            elif self.kind == "hz":
                value = parse_rate_hz(raw)
            elif self.kind in ("count", "integer"):
                if not raw.lstrip("-").isdigit() or (self.kind == "count" and raw.startswith("-")):
                    raise ValueError(f"must be a whole number{self._range()}")
                value = int(raw)
            elif self.kind == "fraction":
                value = self._fraction(raw)
            elif self.kind == "history":
                value = self._history(raw)
            elif self.kind == "choice":
                value = raw.lower().replace("_", "-")
                if self.choices is not None and value not in self.choices:
                    raise ValueError(f"choose from {', '.join(self.choices)}")
            else:
                if not raw:
                    raise ValueError("must not be empty")
                value = raw
        except UnitError as exc:
            raise ValueError(f"must be{self._range()}" if isinstance(exc, AboveBound) and self._range()
                             else str(exc)) from None
        if isinstance(value, (int, float)) and not self._within(value):
            raise ValueError(f"must be{self._range()}")
        return value

    @property
    def each(self) -> "Row":
        """A list's item as a row of its own (its kind, range and choices)."""
        return replace(self, kind=self.item or "count", item=None)

    def _list(self, text: Any) -> tuple:
        items = text if isinstance(text, (list, tuple)) else str(text).split(",")
        values = tuple(self.each.parse(item) for item in items)
        low, high = self.items
        if not low <= len(values) <= high:
            raise ValueError(f"expected {low if low == high else f'{low} to {high}'} comma-separated values")
        return values

    def _within(self, value: float) -> bool:
        return (self.min is None or value >= self.min) and (self.max is None or value <= self.max)

    def _range(self) -> str:
        if self.min is None or self.max is None:
            return ""
        return f" from {self.shown(self.min)} to {self.shown(self.max)}"

    def _fraction(self, raw: str) -> float:
        try:
            value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
        except ValueError:
            raise ValueError("expected a fraction or a percentage, e.g. 5%") from None
        if self.choices is not None:
            found = next((float(c) for c in self.choices if abs(float(c) - value) < 1e-9), None)
            if found is None:
                raise ValueError(f"choose from {', '.join(self.choices)}")
            return found
        return value

    def _history(self, raw: str) -> str:
        text = raw.lower().replace("_", "-")
        if text == "keep-all":
            return text
        depth = text[len("keep-last:"):] if text.startswith("keep-last:") else ""
        if depth.isdigit() and self._within(int(depth)) and int(depth) > 0:
            return f"keep-last:{int(depth)}"
        raise ValueError(f"expected keep-last:N (N from {self.shown(self.min)} to {self.shown(self.max)}) or keep-all")

    def argv(self, value: Any) -> str:
        """A machine value as the agent's argument."""
        if self.kind == "flag":
            return "1" if value else "0"
        if self.kind == "list":
            return ",".join(self.each.argv(item) for item in value)
        if self.kind in ("hz", "fraction"):
            return repr(float(value))
        return str(value)

    def shown(self, value: Any) -> str:
        """A machine value as a person writes it (``5s``, ``1KiB``, ``5%``)."""
        if value is None:
            return "-"
        if self.kind == "list":
            return ",".join(self.each.shown(item) for item in value)
        if self.kind == "bytes":
            return format_size(int(value))
        if self.kind == "ns":
            return format_duration_ns(int(value)) if value >= 0 else f"-{format_duration_ns(-int(value))}"
        if self.kind == "hz":
            return format_rate_hz(value)
        if self.kind == "fraction" and self.choices is None:
            return f"{100 * value:g}%"
        if self.kind == "fraction":
            return f"{value:.2f}"
        if self.kind == "flag":
            return "true" if value else "false"
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        return str(value)

    @property
    def record_scale(self) -> float:
        """Machine units (ns) per unit of its record field, by the field's name (``duration_s``: 1e9)."""
        return next((f for end, f in _RECORD_SCALE.items() if self.record and self.record.endswith(end)), 1)

    def record_value(self, value: Any) -> Any:
        """A machine value in its record field's unit (``duration_s``: seconds)."""
        if value is None or self.record is None:
            return None
        if self.kind == "ns":
            return value / self.record_scale if self.record_scale != 1 else int(value)
        if self.kind in ("hz", "fraction"):
            return float(value)
        if self.kind in ("bytes", "count", "integer"):
            return int(value)
        if self.kind == "flag":
            return bool(value)
        return str(value)

    def from_record(self, value: Any) -> Any:
        """A record field's value back as a machine value (what a record says was asked)."""
        if value is None or self.record is None:
            return None
        if self.kind == "ns":
            return int(round(value * self.record_scale))
        return value

    @property
    def field(self) -> str:
        """Its field in the record (``qos.history``); ValueError for a row that has none (not a record row)."""
        if self.record is None:
            raise ValueError(f"--{self.name} has no field in the record")
        return self.record

    def label_part(self, value: Any) -> str | None:
        """Its part of a QoS label, or None when it says nothing (unset, or the default)."""
        if self.label is None or value is None or value is False:
            return None
        if value == self.default and not self.label_default:
            return None
        return self.label.replace("{}", self.shown(value)) if "{}" in self.label else self.label

    @classmethod
    def from_json(cls, row: dict) -> "Row":
        def words(key: str) -> tuple[str, ...] | None:
            value = row.get(key)
            return tuple(str(v) for v in value) if isinstance(value, list) else None

        default = row.get("default")
        items = row.get("items")
        return cls(name=str(row["name"]), kind=str(row["kind"]), unit=str(row.get("unit") or ""),
                   group=str(row.get("group") or "control"), min=row.get("min"), max=row.get("max"),
                   choices=words("choices"), default=tuple(default) if isinstance(default, list) else default,
                   capability=row.get("capability"),
                   refusal=row.get("refusal"), modes=words("modes") or (), roles=words("roles") or (),
                   command=str(row.get("command") or "run"), required=bool(row.get("required")),
                   point_key=bool(row.get("point_key")), record=row.get("record"), label=row.get("label"),
                   label_default=bool(row.get("label_default")), help=str(row.get("help") or ""),
                   item=row.get("item"),
                   items=(int(items[0]), int(items[1])) if isinstance(items, list) and len(items) == 2 else (1, 1),
                   pair=bool(row.get("pair")))


@dataclass(frozen=True)
class OptionTable:
    """The rows, in the agent's order (a QoS label lists its parts in this
    order), and the rules across options: limits by an adapter's figures and
    values that cannot go together. A name is a row of each command that has
    it (``floor``'s ``--wait`` is not ``run``'s): looked up by name, a table
    gives its ``run`` row, :meth:`command` the table of another command."""

    rows: tuple[Row, ...]
    limits: tuple[dict, ...] = ()
    conflicts: tuple[dict, ...] = ()

    def __getitem__(self, name: str) -> Row:
        return self._by_name()[name]

    def __contains__(self, name: str) -> bool:
        return name in self._by_name()

    def get(self, name: str) -> Row | None:
        return self._by_name().get(name)

    def by_key(self, key: str) -> Row | None:
        """The row a plan key (``latency_count``) names."""
        return self._by_name().get(key.replace("_", "-"))

    def _by_name(self) -> dict[str, Row]:
        cached = self.__dict__.get("_index")
        if cached is None:
            cached = {}
            for r in sorted(self.rows, key=lambda r: r.command != "run"):  # stable: run's rows first
                cached.setdefault(r.name, r)
            object.__setattr__(self, "_index", cached)
        return cached

    def command(self, name: str) -> "OptionTable":
        """The rows of the agent's command ``name`` (``floor``, ``wakeup``), in order."""
        return OptionTable(tuple(r for r in self.rows if r.command == name))

    def argv(self, command: str, values: dict[str, Any]) -> list[str]:
        """The agent's ``command`` with these options (machine values by row name; KeyError: none of its)."""
        rows = self.command(command)
        return [command, *(part for name, value in values.items()
                           for part in (rows[name].flag, rows[name].argv(value)))]

    @property
    def user_rows(self) -> tuple[Row, ...]:
        return tuple(r for r in self.rows if r.user)

    @property
    def label_rows(self) -> tuple[Row, ...]:
        return tuple(r for r in self.rows if r.label is not None)

    @property
    def record_rows(self) -> tuple[Row, ...]:
        return tuple(r for r in self.rows if r.record is not None)

    @classmethod
    def from_event(cls, event: dict) -> "OptionTable":
        rows = tuple(Row.from_json(r) for r in event.get("options") or [] if isinstance(r, dict) and "name" in r)
        return cls(rows, tuple(d for d in event.get("limits") or [] if isinstance(d, dict)),
                   tuple(d for d in event.get("conflicts") or [] if isinstance(d, dict)))


@lru_cache(maxsize=1)
def snapshot_event() -> dict:
    """The checked-in snapshot of the agent's ``options`` event."""
    return json.loads(resources.files(__package__).joinpath(SNAPSHOT_FILE).read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def snapshot() -> OptionTable:
    """The option table as the snapshot has it (no agent needed)."""
    return OptionTable.from_event(snapshot_event())


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
