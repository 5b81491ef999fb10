"""What the agent says of itself (``mwperf-agent list``, docs/agent-protocol.md):
its vocabulary (modes, waits, clocks, reliabilities, durabilities), its limits,
and what each adapter can do.

This is the only source of what can be asked of a middleware: validation
(:mod:`mwperf.plan`), the agents' arguments and the records all read it, and
nothing of it is written down in Python. A new adapter that the agent
registers is known here by being listed.
"""

from __future__ import annotations

from dataclasses import dataclass

from mwperf.errors import AgentError

__all__ = ["AGENT_NAME", "AdapterInfo", "AgentInfo"]

AGENT_NAME = "mwperf-agent"


@dataclass(frozen=True)
class AdapterInfo:
    """One adapter as the agent describes it (``mwperf-agent list``): the only
    source of what a middleware can do. Nothing of it is kept in Python."""

    name: str
    version: str | None
    max_size: int
    transports: tuple[str, ...]      # selectable with --transport
    transport: str                   # in force when none is chosen
    reliabilities: tuple[str, ...]
    reliability: str                 # default
    qos: frozenset[str] = frozenset()  # history, durability, keyed, async, batch
    receives: tuple[str, ...] = ()   # --receive choices ('' = the adapter's one way)
    receive: str = ""                # default
    waits: tuple[str, ...] = ("block",)
    hosts: str = "any"               # "one": shared memory only, no --link / --hosts
    service: str | None = None       # a process the controller runs for each point
    service_config: str | None = None  # its configuration file (an absolute path on the agent's host)
    max_subscribers: int = 1         # subscribers one publisher serves (--subscribers); 0: no limit
    # readers one subscriber process can hold (--subscribers-as threads); 0: no limit of its own.
    # An agent that does not say so predates --readers: one.
    max_readers_per_process: int = 1
    readers_note: str = ""           # why it is limited
    notes: str = ""
    license: str = ""                # the terms it runs under here, where they are not open source
    max_size_note: str = ""          # whose limit max_size is, and why

    def honours(self, flag: str) -> bool:
        return flag in self.qos

    @property
    def has_qos(self) -> bool:
        """A middleware with QoS beyond its one fixed reliability (DDS-like)."""
        return bool(self.qos) or bool(self.receives)

    @classmethod
    def from_event(cls, event: dict) -> "AdapterInfo":
        def names(key: str) -> tuple[str, ...]:
            value = event.get(key)
            return tuple(str(v) for v in value) if isinstance(value, list) else ()

        qos = event.get("qos") if isinstance(event.get("qos"), dict) else {}
        return cls(
            name=str(event["name"]),
            version=event.get("version"),
            max_size=int(event.get("max_size") or 0),
            transports=names("transports"),
            transport=str(event.get("transport") or ""),
            reliabilities=names("reliabilities"),
            reliability=str(event.get("reliability") or ""),
            qos=frozenset(k for k, v in qos.items() if v is True),
            receives=names("receives"),
            receive=str(event.get("receive") or ""),
            waits=names("waits") or ("block",),
            hosts=str(event.get("hosts") or "any"),
            service=event.get("service") or None,
            service_config=event.get("service_config") or None,
            max_subscribers=int(event["max_subscribers"]) if isinstance(event.get("max_subscribers"), int) else 1,
            max_readers_per_process=(int(event["max_readers_per_process"])
                                     if isinstance(event.get("max_readers_per_process"), int) else 1),
            readers_note=str(event.get("readers_note") or ""),
            notes=str(event.get("notes") or ""),
            license=str(event.get("license") or ""),
            max_size_note=str(event.get("max_size_note") or ""),
        )

    def summary(self) -> str:
        """One compact line, e.g. ``reliability reliable,best-effort; history, keyed; receive listener,waitset; transports udp,shm``."""
        parts = [f"reliability {','.join(self.reliabilities) or '-'}"]
        if self.qos:
            parts.append(", ".join(sorted(self.qos)))
        if self.receives:
            parts.append(f"receive {','.join(self.receives)}")
        parts.append(f"transports {','.join(self.transports) or '-'}")
        if self.hosts == "one":
            parts.append("one host only")
        if self.service:
            parts.append(f"needs {self.service}")
        return "; ".join(parts)

    def as_dict(self) -> dict:
        return {
            "name": self.name, "version": self.version, "max_size": self.max_size,
            "transports": list(self.transports), "transport": self.transport,
            "reliabilities": list(self.reliabilities), "reliability": self.reliability,
            "qos": sorted(self.qos), "receives": list(self.receives), "receive": self.receive,
            "waits": list(self.waits), "hosts": self.hosts, "service": self.service,
            "max_subscribers": self.max_subscribers, "max_readers_per_process": self.max_readers_per_process,
            **({"license": self.license} if self.license else {}),
        }


@dataclass(frozen=True)
class AgentInfo:
    """What ``mwperf-agent list`` says of the agent: its vocabulary and limits,
    the adapters it has and those it was built without (with the reason)."""

    version: str | None
    header_size: int
    modes: tuple[str, ...]
    waits: tuple[str, ...]
    clocks: tuple[str, ...]
    reliabilities: tuple[str, ...]
    durabilities: tuple[str, ...]
    limits: dict
    adapters: dict[str, AdapterInfo]
    missing: tuple[tuple[str, str], ...] = ()
    congestions: tuple[str, ...] = ()

    @property
    def transports(self) -> tuple[str, ...]:
        """Every transport some adapter offers, in first-seen order."""
        return tuple(dict.fromkeys(t for a in self.adapters.values() for t in a.transports))

    @property
    def receives(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r for a in self.adapters.values() for r in a.receives))

    def limit(self, key: str, default):
        value = self.limits.get(key)
        return default if value is None else value

    @classmethod
    def from_events(cls, events: list[dict]) -> "AgentInfo":
        head = next((e for e in events if e.get("event") == "agent"), None)
        if head is None:
            raise AgentError(f"'{AGENT_NAME} list' did not describe itself (an agent older than this controller?)")

        def names(key: str) -> tuple[str, ...]:
            value = head.get(key)
            return tuple(str(v) for v in value) if isinstance(value, list) else ()

        adapters = {}
        for event in events:
            if event.get("event") == "adapter" and event.get("name"):
                info = AdapterInfo.from_event(event)
                adapters[info.name] = info
        missing = tuple((str(m.get("name")), str(m.get("reason"))) for m in head.get("missing") or []
                        if isinstance(m, dict))
        return cls(version=head.get("version"), header_size=int(head.get("header_size") or 0),
                   modes=names("modes"), waits=names("waits"), clocks=names("clocks"),
                   reliabilities=names("reliabilities"), durabilities=names("durabilities"),
                   limits=dict(head.get("limits") or {}), adapters=adapters, missing=missing,
                   congestions=names("congestions"))
