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

from mwperf.description import AdapterInfo, AgentInfo
from mwperf.errors import UnitError, Unsupported, UsageError
from mwperf.units import parse_duration_ns

__all__ = [
    "DEFAULT_HISTORY", "DEFAULT_MATCH_TIMEOUT",
    "QosRequest", "QosOptions", "parse_qos", "refusal", "check_supported", "receive_for", "qos_agent_args",
]

DEFAULT_HISTORY = "keep-last:10"
#: Beyond this a wait for discovery is a hang (and past what the agent can time, 2^55 ns).
MAX_MATCH_TIMEOUT_NS = 3600 * 10**9
DEFAULT_MATCH_TIMEOUT = "10s"
NET_DIR = Path("/sys/class/net")


@dataclass(frozen=True)
class QosRequest:
    """The QoS options as given, before validation: list options as their
    items (None: not given), flags as booleans."""

    reliabilities: tuple[str, ...] | None = None
    best: bool = False
    histories: tuple[str, ...] | None = None
    durabilities: tuple[str, ...] | None = None
    transports: tuple[str, ...] | None = None
    keyed: bool = False
    instances: str | None = None
    async_: bool = False
    batch: bool = False
    receive: str | None = None
    nic: str | None = None
    match_timeout: str | None = None
    congestion: str | None = None


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
    congestion: str | None = None  # block | drop (what a full queue does to the writer); None: the default

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
            "congestion": self.congestion,
        }


def _choice(option: str, value: str, choices: Iterable[str]) -> str:
    name = value.strip().lower().replace("_", "-")
    if name not in choices:
        raise UsageError(option, value, f"choose from {', '.join(choices)}")
    return name


def _choices(option: str, items: tuple[str, ...] | None, choices: Iterable[str]) -> tuple[str | None, ...]:
    """Each item checked and normalised, duplicates dropped; (None,) when not given."""
    if items is None:
        return (None,)
    return tuple(dict.fromkeys(_choice(option, v, choices) for v in items))


def parse_history(value: str, max_depth: int) -> str:
    text = value.strip().lower().replace("_", "-")
    if text == "keep-all":
        return text
    if text.startswith("keep-last:"):
        depth = text[len("keep-last:"):]
        if depth.isdigit() and 1 <= int(depth) <= max_depth:
            return f"keep-last:{int(depth)}"
        raise UsageError("--history", value, f"the depth must be a whole number from 1 to {max_depth}")
    raise UsageError("--history", value, "expected keep-last:N or keep-all")


def _interfaces(net_dir: Path | None) -> list[str] | None:
    if net_dir is None:  # the interfaces are another host's (--hosts)
        return None
    try:
        return sorted(os.listdir(net_dir))
    except OSError:
        return None


def _instances(request: QosRequest, agent: AgentInfo) -> int:
    if request.instances is None:
        return 1 if request.keyed else 0
    text = str(request.instances).strip()
    if not request.keyed:
        raise UsageError("--instances", text, "needs --keyed (instances of a keyed topic)")
    max_instances = int(agent.limit("max_instances", 10_000_000))
    if not text.isdigit() or not 1 <= int(text) <= max_instances:
        raise UsageError("--instances", text, f"must be a whole number from 1 to {max_instances}")
    return int(text)


def _nic(nic: str | None, net_dir: Path | None) -> str | None:
    if nic is None:
        return None
    value = nic.strip()
    known = _interfaces(net_dir)
    if not value or "/" in value or (known is not None and value not in known):
        have = ", ".join(known) if known else "none found"
        raise UsageError("--nic", nic, f"no such network interface (have: {have})")
    return value


def parse_qos(agent: AgentInfo, request: QosRequest = QosRequest(), *, net_dir: Path | None = NET_DIR) -> QosOptions:
    """Check the values against the agent's vocabulary (not yet whether the
    chosen middlewares honour them). ``net_dir`` lists this host's network
    interfaces; None when --nic names another host's."""
    reliabilities = _choices("--reliability", request.reliabilities, agent.reliabilities)
    if request.best:
        if request.reliabilities is not None and reliabilities != ("best-effort",):
            raise UsageError("--best", None, f"conflicts with --reliability {','.join(request.reliabilities)}")
        reliabilities = ("best-effort",)

    histories = None
    if request.histories is not None:
        max_depth = int(agent.limit("max_history_depth", 1_000_000))
        histories = tuple(dict.fromkeys(parse_history(v, max_depth) for v in request.histories))

    durabilities = _choices("--durability", request.durabilities, agent.durabilities)
    transports = _choices("--transport", request.transports, (*agent.transports, "default"))
    instances = _instances(request, agent)
    receive = None if request.receive is None else _choice("--receive", request.receive, agent.receives or ("none",))
    nic = _nic(request.nic, net_dir)
    congestion = None if request.congestion is None else \
        _choice("--congestion", request.congestion, agent.congestions or ("none",))
    timeout = request.match_timeout if request.match_timeout is not None else DEFAULT_MATCH_TIMEOUT
    try:
        match_ns = parse_duration_ns(timeout)
    except UnitError as exc:
        raise UsageError("--match-timeout", timeout, str(exc)) from None
    if match_ns > MAX_MATCH_TIMEOUT_NS:
        raise UsageError("--match-timeout", timeout, "longer than an hour (no discovery takes that long)")

    return QosOptions(
        reliabilities=reliabilities,
        histories=histories,
        durabilities=durabilities,
        transports=tuple(dict.fromkeys(None if name == "default" else name for name in transports)),
        instances=instances,
        async_=request.async_,
        batch=request.batch,
        receive=receive,
        nic=nic,
        match_timeout_ns=match_ns,
        best=request.best,
        congestion=congestion,
    )


def refusal(qos: QosOptions, info: AdapterInfo) -> Unsupported | None:
    """The first option ``info``'s middleware cannot honour; None if all are fine."""
    mw = info.name
    for rel in qos.reliabilities:
        if rel is not None and rel not in info.reliabilities:
            return Unsupported("--best", None, f"not supported by {mw}", mw) if qos.best else \
                Unsupported("--reliability", rel, f"not supported by {mw}", mw)
    for hist in qos.histories or ():
        if not info.honours("history"):
            return Unsupported("--history", hist, f"not supported by {mw} (no history QoS)", mw)
    for dur in qos.durabilities:
        if dur is not None and not info.honours("durability"):
            return Unsupported("--durability", dur, f"not supported by {mw} (no durability QoS)", mw)
    if qos.instances and not info.honours("keyed"):
        return Unsupported("--keyed", None, f"not supported by {mw} (no keyed topics)", mw)
    if qos.async_ and not info.honours("async"):
        return Unsupported("--async", None, f"not supported by {mw} (no asynchronous publishing)", mw)
    if qos.congestion is not None and not info.honours("congestion"):
        return Unsupported("--congestion", qos.congestion, f"not supported by {mw} (no congestion control "
                                                           f"choice)", mw)
    if qos.batch and not info.honours("batch"):
        return Unsupported("--batch", None, f"not supported by {mw} (no write batching)", mw)
    if qos.receive is not None and qos.receive not in info.receives:
        return Unsupported("--receive", qos.receive,
                           f"not supported by {mw} (choose from: {', '.join(info.receives) or 'none'})", mw)
    for name in qos.transports:
        if name is not None and name not in info.transports:
            return Unsupported("--transport", name,
                               f"not supported by {mw} (choose from: {', '.join(info.transports) or 'none'})", mw)
    if qos.nic is not None and not info.has_qos:
        return Unsupported("--nic", qos.nic, f"not supported by {mw} (raw sockets always use loopback)", mw)
    return None


def check_supported(qos: QosOptions, mws: Iterable[str], adapters: Mapping[str, AdapterInfo]) -> None:
    """UsageError naming the first option a chosen middleware cannot honour."""
    for mw in mws:
        problem = refusal(qos, adapters[mw])
        if problem is not None:
            raise problem


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
    if qos.congestion is not None:
        args += ["--congestion", qos.congestion]
    receive = receive_for(qos, info, wait)
    if receive is not None:
        args += ["--receive", receive]
    if transport is not None:
        args += ["--transport", transport]
    if qos.nic is not None and info is not None and info.has_qos:
        args += ["--nic", qos.nic]
    return args
