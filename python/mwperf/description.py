"""What the agent says of itself (``mwperf-agent list``, docs/agent-protocol.md):
its option table (:class:`mwperf.plan.table.OptionTable`), the timing its
deadlines need, and what each adapter can do: its named capabilities (the
option table's rows refer to them), limits, defaults and facts (what it
leaves behind, the transport it uses between two hosts).

This is the only source of what can be asked of a middleware: validation
(:mod:`mwperf.plan`), the agents' arguments and the records all read it, and
nothing of it is written down in Python. A new adapter that the agent
registers is known here by being listed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Mapping

from mwperf.errors import AgentError
from mwperf.table import OptionTable

__all__ = ["AGENT_NAME", "AdapterInfo", "AgentInfo", "json_events"]

AGENT_NAME = "mwperf-agent"


def json_events(lines) -> list[dict]:
    """The JSON objects of ``lines`` (what an agent printed), the other lines skipped."""
    events = []
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events


def _strings(value) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def _mapping(value) -> dict:
    return dict(value) if isinstance(value, dict) else {}


@dataclass(frozen=True)
class AdapterInfo:
    """One adapter as the agent describes it (``mwperf-agent list``)."""

    name: str
    version: str | None
    #: capability -> the values it takes (() = any the option takes), e.g. {"history": (), "transport": ("udp",)}
    capabilities: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: capability -> the adapter's default ("transport": "shm+udp")
    defaults: Mapping[str, str] = field(default_factory=dict)
    #: max_size, max_subscribers, max_readers_per_process (0: no limit)
    limits: Mapping[str, int] = field(default_factory=dict)
    limit_notes: Mapping[str, str] = field(default_factory=dict)
    hosts: str = "any"               # "one": shared memory only, no --link / --hosts
    service: str | None = None       # a process the controller runs for each point
    service_config: str | None = None  # its configuration file (an absolute path on the agent's host)
    #: between two hosts, with no --transport: the transport to use (its default crosses no host), else None
    remote_transport: str | None = None
    #: what it may leave behind: glob patterns of files (absolute paths)
    leftovers: tuple[str, ...] = ()
    notes: str = ""
    license: str = ""                # the terms it runs under here, where they are not open source
    #: capability -> why this adapter lacks it, in its own words (the option row's refusal otherwise)
    refusals: Mapping[str, str] = field(default_factory=dict)
    security: str = ""               # where it applies DDS Security's protection (a secured adapter)

    def honours(self, capability: str) -> bool:
        return capability in self.capabilities

    def choices(self, capability: str) -> tuple[str, ...]:
        return tuple(self.capabilities.get(capability) or ())

    def limit(self, name: str) -> int:
        return int(self.limits.get(name) or 0)

    @property
    def max_size(self) -> int:
        return self.limit("max_size")

    @property
    def max_size_note(self) -> str:
        """Whose limit max_size is, and why ("" when the adapter does not say)."""
        return self.limit_notes.get("max_size", "")

    @property
    def transports(self) -> tuple[str, ...]:
        return self.choices("transport")

    @property
    def transport(self) -> str:
        return self.defaults.get("transport", "")

    @property
    def reliabilities(self) -> tuple[str, ...]:
        return self.choices("reliability")

    @property
    def reliability(self) -> str:
        return self.defaults.get("reliability", "")

    @property
    def receives(self) -> tuple[str, ...]:
        return self.choices("receive")

    @property
    def receive(self) -> str:
        return self.defaults.get("receive", "")

    @classmethod
    def from_event(cls, event: dict) -> "AdapterInfo":
        caps = {str(k): _strings(v) for k, v in _mapping(event.get("capabilities")).items()}
        limits = {str(k): int(v) for k, v in _mapping(event.get("limits")).items()
                  if isinstance(v, int) and not isinstance(v, bool)}
        return cls(
            name=str(event["name"]),
            version=event.get("version"),
            capabilities=caps,
            defaults={str(k): str(v) for k, v in _mapping(event.get("defaults")).items()},
            limits=limits,
            limit_notes={str(k): str(v) for k, v in _mapping(event.get("limit_notes")).items()},
            hosts=str(event.get("hosts") or "any"),
            service=event.get("service") or None,
            service_config=event.get("service_config") or None,
            remote_transport=event.get("remote_transport") or None,
            leftovers=_strings(event.get("leftovers")),
            notes=str(event.get("notes") or ""),
            license=str(event.get("license") or ""),
            refusals={str(k): str(v) for k, v in _mapping(event.get("refusals")).items()},
            security=str(event.get("security") or ""),
        )

    def summary(self) -> str:
        """One compact line, e.g. ``reliability reliable,best-effort; history, keyed; receive
        listener,waitset; transports udp,shm``."""
        parts = [f"reliability {','.join(self.reliabilities) or '-'}"]
        plain = sorted(c for c, values in self.capabilities.items()
                       if not values and c not in ("transport", "reliability", "receive", "wait"))
        if plain:
            parts.append(", ".join(plain))
        if self.receives:
            parts.append(f"receive {','.join(self.receives)}")
        parts.append(f"transports {','.join(self.transports) or '-'}")
        if self.hosts == "one":
            parts.append("one host only")
        if self.service:
            parts.append(f"needs {self.service}")
        return "; ".join(parts)

    def as_dict(self) -> dict:
        return {"name": self.name, "version": self.version,
                "capabilities": {k: list(v) for k, v in self.capabilities.items()}, "defaults": dict(self.defaults),
                "limits": dict(self.limits), "hosts": self.hosts, "service": self.service,
                **({"license": self.license} if self.license else {})}


@dataclass(frozen=True)
class AgentInfo:
    """What ``mwperf-agent list`` says of the agent: its option table, the
    timing its deadlines need, the adapters it has and those it was built
    without (with the reason)."""

    version: str | None
    header_size: int
    table: OptionTable
    adapters: dict[str, AdapterInfo]
    timing: Mapping[str, int] = field(default_factory=dict)
    missing: tuple[tuple[str, str], ...] = ()

    @property
    def leftovers(self) -> tuple[str, ...]:
        """What any of the adapters may leave behind (glob patterns of absolute paths)."""
        return tuple(dict.fromkeys(p for a in self.adapters.values() for p in a.leftovers))

    def vocabulary(self, capability: str) -> tuple[str, ...]:
        """Every value some adapter takes for ``capability``, in first-seen order."""
        return tuple(dict.fromkeys(v for a in self.adapters.values() for v in a.choices(capability)))

    def timing_s(self, key: str) -> float:
        """One of the agent's timing figures (``linger_ns``), in seconds."""
        value = self.timing.get(key)
        if not isinstance(value, int):
            raise AgentError(f"'{AGENT_NAME} list' does not say its {key} (an agent older than this controller?)")
        return value / 1e9

    @classmethod
    def from_events(cls, events: list[dict]) -> "AgentInfo":
        head = next((e for e in events if e.get("event") == "agent"), None)
        if head is None:
            raise AgentError(f"'{AGENT_NAME} list' did not describe itself (an agent older than this controller?)")
        table = next((e for e in events if e.get("event") == "options"), None)
        if table is None or not isinstance(table.get("options"), list):
            raise AgentError(f"'{AGENT_NAME} list' published no option table (an agent older than this controller?)")
        adapters = {}
        for event in events:
            if event.get("event") == "adapter" and event.get("name"):
                info = AdapterInfo.from_event(event)
                adapters[info.name] = info
        missing = tuple((str(m.get("name")), str(m.get("reason"))) for m in head.get("missing") or []
                        if isinstance(m, dict))
        timing = {str(k): int(v) for k, v in _mapping(head.get("timing")).items() if isinstance(v, int)}
        return cls(version=head.get("version"), header_size=int(head.get("header_size") or 0),
                   table=OptionTable.from_event(table), adapters=adapters, timing=timing, missing=missing)
