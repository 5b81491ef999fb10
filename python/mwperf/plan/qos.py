"""QoS and transport options of ``mwperf run``.

Parsed and checked here, before anything runs: the values themselves, then
whether every chosen middleware can honour them. Both against the agent's
description of itself (``mwperf-agent list``: its words for reliability,
durability, transports and receive modes, and what each adapter honours);
nothing of that vocabulary is kept here. A refusal is one line naming the option, the value and
the middleware (``--async: not supported by cyclonedds (no asynchronous
publishing)``).

An option reaches an agent only when the user set it, or when it is a default
that applies to that middleware (history ``keep-last:10`` for a middleware with
a history QoS, as the reference sweep uses), so raw-socket points never receive
DDS options.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from mwperf.agent import AdapterInfo, AgentInfo
from mwperf.units import UnitError, parse_duration_ns, parse_list

__all__ = [
    "DEFAULT_HISTORY", "DEFAULT_MATCH_TIMEOUT",
    "QosOptions", "QosError", "parse_qos", "unsupported", "check_supported", "qos_agent_args",
]

DEFAULT_HISTORY = "keep-last:10"
DEFAULT_MATCH_TIMEOUT = "10s"
NET_DIR = Path("/sys/class/net")


class QosError(ValueError):
    """A bad QoS value; the message is the whole line (option, value, why)."""


@dataclass(frozen=True)
class QosOptions:
    """The QoS part of a run. List options expand into test points (None =
    the middleware's default, nothing passed); the others apply to every point."""

    reliabilities: tuple[str | None, ...] = (None,)
    histories: tuple[str, ...] | None = None  # None: DEFAULT_HISTORY where history is supported
    durabilities: tuple[str | None, ...] = (None,)
    transports: tuple[str | None, ...] = (None,)  # None = the middleware's default transport
    instances: int = 0  # 0 = unkeyed topic
    async_: bool = False
    batch: bool = False
    receive: str | None = None
    nic: str | None = None
    match_timeout_ns: int = 10_000_000_000
    best: bool = False  # --reliability came from --best (for messages)

    def histories_for(self, info: AdapterInfo | None) -> tuple[str | None, ...]:
        if info is None or not info.honours("history"):
            return (None,)
        return self.histories or (DEFAULT_HISTORY,)

    def as_dict(self) -> dict:
        return {
            "reliability": list(self.reliabilities),
            "history": None if self.histories is None else list(self.histories),
            "durability": list(self.durabilities),
            "transport": list(self.transports),
            "instances": self.instances,
            "async": self.async_,
            "batch": self.batch,
            "receive": self.receive,
            "nic": self.nic,
            "match_timeout_ns": self.match_timeout_ns,
        }


def _items(option: str, text: str) -> list[str]:
    try:
        items = parse_list(text)
    except UnitError as exc:
        raise QosError(f"{option} {text}: {exc}") from None
    out: list[str] = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


def _choice(option: str, value: str, choices: Iterable[str]) -> str:
    name = value.strip().lower().replace("_", "-")
    if name not in choices:
        raise QosError(f"{option} {value}: choose from {', '.join(choices)}")
    return name


def parse_history(value: str, max_depth: int) -> str:
    text = value.strip().lower().replace("_", "-")
    if text == "keep-all":
        return text
    if text.startswith("keep-last:"):
        depth = text[len("keep-last:"):]
        if depth.isdigit() and 1 <= int(depth) <= max_depth:
            return f"keep-last:{int(depth)}"
        raise QosError(f"--history {value}: the depth must be a whole number from 1 to {max_depth}")
    raise QosError(f"--history {value}: expected keep-last:N or keep-all")


def _interfaces(net_dir: Path | None) -> list[str] | None:
    if net_dir is None:  # the interfaces are another host's (--hosts)
        return None
    try:
        return sorted(os.listdir(net_dir))
    except OSError:
        return None


def parse_qos(
    agent: AgentInfo,
    *,
    reliability: str | None = None,
    best: bool = False,
    history: str | None = None,
    durability: str | None = None,
    keyed: bool = False,
    instances: str | int | None = None,
    async_: bool = False,
    batch: bool = False,
    receive: str | None = None,
    transport: str | None = None,
    nic: str | None = None,
    match_timeout: str | None = None,
    net_dir: Path | None = NET_DIR,
) -> QosOptions:
    """Check the values against the agent's vocabulary (not yet whether the
    chosen middlewares honour them)."""
    reliabilities: list[str | None] = [None]
    if reliability is not None:
        reliabilities = [_choice("--reliability", v, agent.reliabilities) for v in _items("--reliability", reliability)]
        if best and reliabilities != ["best-effort"]:
            raise QosError(f"--best: conflicts with --reliability {reliability}")
    elif best:
        reliabilities = ["best-effort"]

    histories = None
    if history is not None:
        max_depth = int(agent.limit("max_history_depth", 1_000_000))
        histories = tuple(dict.fromkeys(parse_history(v, max_depth) for v in _items("--history", history)))

    durabilities: list[str | None] = [None]
    if durability is not None:
        durabilities = [_choice("--durability", v, agent.durabilities) for v in _items("--durability", durability)]

    transports: list[str | None] = [None]
    if transport is not None:
        transports = []
        for value in _items("--transport", transport):
            name = _choice("--transport", value, (*agent.transports, "default"))
            name_or_default = None if name == "default" else name
            if name_or_default not in transports:
                transports.append(name_or_default)

    count = 0
    if instances is not None:
        text = str(instances).strip()
        if not keyed:
            raise QosError(f"--instances {text}: needs --keyed (instances of a keyed topic)")
        max_instances = int(agent.limit("max_instances", 10_000_000))
        if not text.isdigit() or not 1 <= int(text) <= max_instances:
            raise QosError(f"--instances {text}: must be a whole number from 1 to {max_instances}")
        count = int(text)
    elif keyed:
        count = 1

    receive_value = None if receive is None else _choice("--receive", receive, agent.receives or ("none",))

    nic_value = None
    if nic is not None:
        nic_value = nic.strip()
        known = _interfaces(net_dir)
        if not nic_value or "/" in nic_value or (known is not None and nic_value not in known):
            have = ", ".join(known) if known else "none found"
            raise QosError(f"--nic {nic}: no such network interface (have: {have})")

    try:
        match_ns = parse_duration_ns(match_timeout if match_timeout is not None else DEFAULT_MATCH_TIMEOUT)
    except UnitError as exc:
        raise QosError(f"--match-timeout {match_timeout}: {exc}") from None

    return QosOptions(
        reliabilities=tuple(dict.fromkeys(reliabilities)),
        histories=histories,
        durabilities=tuple(dict.fromkeys(durabilities)),
        transports=tuple(transports),
        instances=count,
        async_=async_,
        batch=batch,
        receive=receive_value,
        nic=nic_value,
        match_timeout_ns=match_ns,
        best=best,
    )


def unsupported(qos: QosOptions, info: AdapterInfo) -> str | None:
    """The first option ``info``'s middleware cannot honour, as one line; None if all are fine."""
    mw = info.name
    for rel in qos.reliabilities:
        if rel is not None and rel not in info.reliabilities:
            option = "--best" if qos.best else f"--reliability {rel}"
            return f"{option}: not supported by {mw}"
    for hist in qos.histories or ():
        if not info.honours("history"):
            return f"--history {hist}: not supported by {mw} (no history QoS)"
    for dur in qos.durabilities:
        if dur is not None and not info.honours("durability"):
            return f"--durability {dur}: not supported by {mw} (no durability QoS)"
    if qos.instances and not info.honours("keyed"):
        return f"--keyed: not supported by {mw} (no keyed topics)"
    if qos.async_ and not info.honours("async"):
        return f"--async: not supported by {mw} (no asynchronous publishing)"
    if qos.batch and not info.honours("batch"):
        return f"--batch: not supported by {mw} (no write batching)"
    if qos.receive is not None and qos.receive not in info.receives:
        return f"--receive {qos.receive}: not supported by {mw} (choose from: {', '.join(info.receives) or 'none'})"
    for name in qos.transports:
        if name is not None and name not in info.transports:
            return f"--transport {name}: not supported by {mw} (choose from: {', '.join(info.transports) or 'none'})"
    if qos.nic is not None and not info.has_qos:
        return f"--nic {qos.nic}: not supported by {mw} (raw sockets always use loopback)"
    return None


def check_supported(qos: QosOptions, mws: Iterable[str], adapters: Mapping[str, AdapterInfo]) -> None:
    """QosError naming the first option a chosen middleware cannot honour."""
    for mw in mws:
        problem = unsupported(qos, adapters[mw])
        if problem:
            raise QosError(problem)


def receive_for(qos: QosOptions, info: AdapterInfo | None, wait: str) -> str | None:
    """The --receive to pass: the user's, or, when spinning on a middleware
    whose default hands data over on its own thread, the first mode that can
    be polled (a spinning listener is a contradiction)."""
    if qos.receive is not None or info is None or wait != "spin" or info.receive != "listener":
        return qos.receive
    return next((r for r in info.receives if r != "listener"), None)


def qos_agent_args(qos: QosOptions, info: AdapterInfo | None, *, transport: str | None,
                   reliability: str | None, history: str | None, durability: str | None,
                   wait: str = "block") -> list[str]:
    """The QoS arguments of one point's agents (both sides get the same)."""
    args: list[str] = []
    if reliability is not None:
        args += ["--reliability", reliability]
    if history is not None:
        args += ["--history", history]
    if durability is not None:
        args += ["--durability", durability]
    if qos.instances:
        args += ["--instances", str(qos.instances)]
    if qos.async_:
        args += ["--async", "1"]
    if qos.batch:
        args += ["--batch", "1"]
    receive = receive_for(qos, info, wait)
    if receive is not None:
        args += ["--receive", receive]
    if transport is not None:
        args += ["--transport", transport]
    if qos.nic is not None and info is not None and info.has_qos:
        args += ["--nic", qos.nic]
    return args
