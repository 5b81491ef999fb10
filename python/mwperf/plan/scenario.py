"""Scenario files: several flows measured at once (``mwperf run --scenario FILE``).

A scenario is a YAML file (read bounded, as a plan: :mod:`mwperf.plan.plan_file`)::

    name: robot-mobile          # optional: the file's stem
    flows:
      - name: imu               # [A-Za-z0-9_.-], unique
        size: 324               # bytes, the 32-byte mwperf header included
        rate: 200               # Hz (rate mode), or demand: N with burst-gap: T (burst mode)
        publishers: 1           # N publishers on the flow's topic, each its own sequence space
        subscribers: 1          # M subscribers (processes)
        payload: random         # pattern | zeros | random | file:PATH (relative to the scenario file)
        check_payload: false    # the subscribers compare every body with the payload (a memcmp on the
                                # receive path: for tests, not for measuring)
        reliability: best-effort  # any option of the agent's table, as `mwperf run` spells it

Every flow becomes the options of a single-flow point (its own RunOptions,
validated as `mwperf run` validates them); the command line's options
(``--mw``, ``--duration``, ...) are every flow's defaults. Bad input is a
PlanError naming the file, the flow and the key.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping

from mwperf.description import AgentInfo
from mwperf.display import shown
from mwperf.errors import PlanError, UsageError
from mwperf.plan.options import RunOptions, RunRequest
from mwperf.plan.plan_file import load_yaml, read_plan_text
from mwperf.plan.validate import build_run_options
from mwperf.units import parse_size

__all__ = ["Flow", "Scenario", "load_scenario", "is_scenario", "flow_options", "MAX_FLOWS", "MAX_PUBLISHERS",
           "HEADER_BYTES", "MAX_PAYLOAD_FILE_BYTES", "MAX_PAYLOAD_TOTAL_BYTES"]

#: At most this many flows (each is 1 + N + M agent processes at once).
MAX_FLOWS = 32
#: The agent's --publishers range (sequence spaces a subscriber tracks).
MAX_PUBLISHERS = 64
HEADER_BYTES = 32
#: The agent loads at most this much of a ``file:`` payload (core/payload.h's kMaxPayloadFileBytes).
MAX_PAYLOAD_FILE_BYTES = 1 << 30
#: What a scenario's ``file:`` payloads may load in all, over every agent process that loads one (each
#: publisher; each subscriber that checks what arrives): a process holds about twice its file while loading.
MAX_PAYLOAD_TOTAL_BYTES = 2 << 30
_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,40}$")
_OWN = ("name", "publishers", "payload", "check_payload")


@dataclass(frozen=True)
class Flow:
    """One flow: its name, its publishers (N) and the table's options as given (text items)."""

    name: str
    publishers: int
    payload: str
    values: tuple[tuple[str, tuple], ...]
    check_payload: bool = False

    @property
    def mode(self) -> str:
        return "burst" if any(k == "demand" for k, _ in self.values) else "rate"


@dataclass(frozen=True)
class Scenario:
    name: str
    source: str
    flows: tuple[Flow, ...]

    @property
    def digest(self) -> str:
        """16 hex digits of the scenario's name and flows as the file gives them (its records' ``scenario.hash``):
        two runs of one scenario file share it, an edited file has another."""
        flows = [[f.name, f.publishers, f.payload, f.check_payload, [[k, list(v)] for k, v in f.values]]
                 for f in self.flows]
        return hashlib.sha256(json.dumps([self.name, flows], sort_keys=True).encode()).hexdigest()[:16]


def _text(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"{value!r} is not a single value")
    return str(value).strip()


def _payload(source: str, where: str, raw: Any, size_text: str, base: Path) -> str:
    text = _text(raw)
    if text in ("pattern", "zeros", "random"):
        return text
    if not text.startswith("file:"):
        raise PlanError(source, f"{where}.payload", text, "must be pattern, zeros, random or file:PATH")
    path = Path(text[5:]).expanduser()
    path = path if path.is_absolute() else base / path
    try:
        info = os.stat(path)
    except OSError as exc:
        raise PlanError(source, f"{where}.payload", text, f"cannot be read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise PlanError(source, f"{where}.payload", text,
                        "is a directory, not a file" if stat.S_ISDIR(info.st_mode) else "is not a regular file")
    length = info.st_size
    if length > MAX_PAYLOAD_FILE_BYTES:
        raise PlanError(source, f"{where}.payload", text, f"holds {length} bytes, more than the "
                        f"{MAX_PAYLOAD_FILE_BYTES} (1 GiB) the agent loads at most")
    chunk = parse_size(size_text) - HEADER_BYTES
    if length < chunk:
        raise PlanError(source, f"{where}.payload", text,
                        f"holds {length} bytes, less than one sample's {chunk} (size {size_text} less the "
                        f"{HEADER_BYTES}-byte header)")
    return f"file:{path.resolve()}"


def _flow(source: str, index: int, raw: Any, base: Path, names: set[str]) -> Flow:
    where = f"flows[{index}]"
    if not isinstance(raw, dict):
        raise PlanError(source, where, None, "a flow is a mapping (name, size, rate, ...)")
    name = raw.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise PlanError(source, f"{where}.name", None if name is None else str(name),
                        "missing" if name is None else "1 to 40 of A-Z a-z 0-9 _ . -")
    if name in names:
        raise PlanError(source, f"{where}.name", name, "two flows of that name")
    names.add(name)
    where = f"flow '{name}'"
    if "rate" not in raw and "demand" not in raw:
        raise PlanError(source, where, None, "rate: missing (a flow has a rate, or a demand and a burst-gap)")
    if "rate" in raw and "demand" in raw:
        raise PlanError(source, where, None, "rate and demand: a flow is at a rate or in bursts, not both")
    values: dict[str, tuple] = {}
    try:
        for key, value in raw.items():
            if key in _OWN or key == "size":
                continue
            if key == "mode":
                raise PlanError(source, f"{where}.mode", _text(value), "a flow's mode is rate or burst, by its keys")
            values[str(key).replace("_", "-")] = (_text(value),)
        size = _text(raw.get("size", 1024))
        publishers = int(_text(raw.get("publishers", 1)))
    except ValueError as exc:
        raise PlanError(source, where, None, str(exc)) from None
    try:
        parse_size(size)
    except ValueError as exc:
        raise PlanError(source, f"{where}.size", size, str(exc)) from None
    if not 1 <= publishers <= MAX_PUBLISHERS:
        raise PlanError(source, f"{where}.publishers", str(publishers), f"1 to {MAX_PUBLISHERS}")
    payload = _payload(source, where, raw.get("payload", "pattern"), size, base)
    values.update(size=(size,), mode=("burst" if "demand" in raw else "rate",))
    check = raw.get("check_payload", False)
    if not isinstance(check, bool):
        raise PlanError(source, f"{where}.check_payload", str(check), "expected true or false")
    return Flow(name, publishers, payload, tuple(values.items()), check)


def _check_payload_total(source: str, flows: tuple[Flow, ...]) -> None:
    """PlanError when the flows' ``file:`` payloads would load more than
    MAX_PAYLOAD_TOTAL_BYTES over every process that loads one."""
    total = 0
    for flow in flows:
        if not flow.payload.startswith("file:"):
            continue
        loaders = flow.publishers
        if flow.check_payload:
            try:
                loaders += int(dict(flow.values).get("subscribers", ("1",))[0])
            except ValueError:
                loaders += 1  # the option's own check names the value
        try:
            total += os.stat(flow.payload[5:]).st_size * loaders
        except OSError:
            continue  # gone since it was checked: the agent says so
    if total > MAX_PAYLOAD_TOTAL_BYTES:
        raise PlanError(source, "flows", None, f"the file: payloads load {total >> 20} MiB in all (file x publishers, "
                        f"and x subscribers with check_payload), more than the {MAX_PAYLOAD_TOTAL_BYTES >> 20} MiB "
                        "a scenario may (each agent holds about twice its file while loading)")


def is_scenario(path: str | Path) -> bool:
    """A file of plans/ that is a scenario (a top-level list of flows), not a sweep plan."""
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    return re.search(r"^flows:", text, re.M) is not None


def load_scenario(path: str | Path) -> Scenario:
    """The scenario file, checked (not yet against the agent: see :func:`flow_options`)."""
    source = str(path)
    doc = load_yaml(read_plan_text(path, source), source)
    if not isinstance(doc, dict) or not isinstance(doc.get("flows"), list) or not doc["flows"]:
        raise PlanError(source, "flows", None, "missing (a scenario is a mapping with a list of flows)")
    unknown = sorted(set(doc) - {"name", "flows"})
    if unknown:
        raise PlanError(source, unknown[0], None, "unknown key (a scenario has name and flows)")
    raw_flows = doc["flows"]
    if len(raw_flows) > MAX_FLOWS:
        raise PlanError(source, "flows", str(len(raw_flows)), f"too many flows: at most {MAX_FLOWS} run at once")
    names: set[str] = set()
    base = Path(path).resolve().parent
    flows = tuple(_flow(source, i, raw, base, names) for i, raw in enumerate(raw_flows))
    _check_payload_total(source, flows)
    name = doc.get("name", Path(path).stem)
    if not isinstance(name, str) or not 1 <= len(name) <= 80 or shown(name, 81) != name:
        raise PlanError(source, "name", shown(str(name)), "1 to 80 characters, no control character (a scenario's "
                                                          "name is printed)")
    return Scenario(name, source, flows)


def flow_options(scenario: Scenario, flow: Flow, request: RunRequest, agent_info: AgentInfo,
                 agent: str | None, out: Path | None) -> RunOptions:
    """The flow's options over the command line's (its defaults); a bad value is
    a PlanError naming the flow and the option."""
    given: Mapping[str, tuple] = dict(flow.values)
    names = {row.name for row in agent_info.table.user_rows}
    unknown = [k for k in given if k not in names]
    if unknown:
        raise PlanError(scenario.source, f"flow '{flow.name}'.{unknown[0]}", None, "unknown key (not an option of "
                        "the agent's table)")
    values = {k: v for k, v in request.values.items() if k not in ("rate", "demand", "burst-gap", "mode")}
    merged = replace(request, values={**values, **given}, out=request.out if out is None else str(out))
    try:
        return build_run_options(merged, agent_info, agent=agent)
    except UsageError as exc:
        key = (exc.option or "").lstrip("-")
        from_flow = key in given
        raise PlanError(scenario.source, f"flow '{flow.name}'" + (f".{key}" if from_flow else f" ({exc.option})"),
                        exc.value, exc.reason) from None
