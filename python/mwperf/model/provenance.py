"""Where and how a point ran, typed (parts of a :class:`~mwperf.model.record.Record`):
the cores, the middleware as the agents ran it, another tool's point, the
link and the clocks between two hosts, the kept samples, an agent pair's
point, the service kept across points and a secured point's keys."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from mwperf.model.parts import JsonObject, Part, Sides, json_object, strings

__all__ = ["Cpu", "ZeroCopy", "Adapter", "Source", "Link", "Clock", "SamplesFile", "Reuse", "Service", "Host",
           "Certificate", "GovernanceRule", "Security", "SAMPLES_DIR", "SAMPLES_FILE_RE", "samples_path"]

#: Where a point's latency samples are kept, relative to its run directory.
SAMPLES_DIR = "samples"
#: What a record's samples_file.path may be.
SAMPLES_FILE_RE = re.compile(r"^samples/[0-9]{5,9}\.i64$")


def samples_path(index: int) -> str:
    """Where point ``index`` keeps its latency samples, relative to the run directory."""
    return f"{SAMPLES_DIR}/{index:05d}.i64"


@dataclass(frozen=True)
class Cpu:
    """Where the sides ran: their cores (None: not pinned), the placement, the affinity each had."""

    pub: int | None
    sub: int | None
    placement: str | None
    pub_affinity: tuple[int, ...] | None
    sub_affinity: tuple[int, ...] | None

    @classmethod
    def of(cls, value: Any) -> Cpu:
        cpu = value if isinstance(value, dict) else {}
        pub_affinity, sub_affinity = cpu.get("pub_affinity"), cpu.get("sub_affinity")
        return cls(cpu.get("pub"), cpu.get("sub"), cpu.get("placement"),
                   None if pub_affinity is None else tuple(pub_affinity),
                   None if sub_affinity is None else tuple(sub_affinity))

    @property
    def pins(self) -> str | None:
        """``cross-core 0,1`` or ``unpinned``: the placement, and the cores where both are pinned."""
        return self.placement if self.pub is None or self.sub is None else f"{self.placement} {self.pub},{self.sub}"


@dataclass(frozen=True)
class ZeroCopy(Part):
    """Which path the samples took (loan, shm, copy, shm+copy) and who said so (middleware, adapter)."""

    path: str
    source: str


@dataclass(frozen=True)
class Adapter:
    """The middleware as the agents ran it: its adapter, versions, configuration and data path."""

    name: str
    version: str | None
    config: JsonObject | None
    sub_config: JsonObject | None
    versions: dict[str, str] | None
    data_path: JsonObject | None
    zero_copy: ZeroCopy | None
    sub_version: str | None
    sub_versions: dict[str, str] | None

    @classmethod
    def of(cls, value: Any) -> Adapter:
        a = value if isinstance(value, dict) else {}
        return cls(a.get("name") or "", a.get("version"), json_object(a.get("config")),
                   json_object(a.get("sub_config")), strings(a.get("versions")), json_object(a.get("data_path")),
                   ZeroCopy.of(a.get("zero_copy")),
                   a.get("sub_version"), strings(a.get("sub_versions")))


@dataclass(frozen=True)
class Source(Part):
    """Where an imported point came from: the tool, its file and the titled table it was in."""

    tool: str
    file: str
    note: str | None
    section: str | None


@dataclass(frozen=True)
class Link(Part):
    """Where the two sides ran when not on one host's loopback: two namespaces (``netns``) or two hosts (``ssh``)."""

    kind: str
    profile: str | None
    pub: str | None
    sub: str | None
    data: Sequence[str] | None
    nic: str | None
    direction: str | None
    rate_mbit: float | None
    loss_pct: float | None
    delay_ms: float | None
    jitter_ms: float | None
    clock_offset_s: int | None


@dataclass(frozen=True)
class Clock(Part):
    """Two clocks compared (two hosts): the estimated offset, its uncertainty, what was subtracted."""

    offset_us: float
    uncertainty_us: float
    method: str
    same_clock: bool
    flagged: bool
    applied_us: float
    sync: JsonObject | None


@dataclass(frozen=True)
class SamplesFile(Part):
    """The point's kept latency samples: their file in the run directory and how many."""

    path: str
    count: int
    time_ordered: bool


@dataclass(frozen=True)
class Reuse(Part):
    """An agent pair's point (``--reuse-agents``): the pair, the point's place in it, the size it was opened for."""

    pair: int
    point: int
    opened_for_bytes: int


@dataclass(frozen=True)
class Service(Part):
    """The helper process kept across points that served this point."""

    name: str
    instance: int
    served_before: int


@dataclass(frozen=True)
class Host(Part):
    """A side's host with --hosts, as it said over ssh before the first point: what it is, the NIC of its data
    address, its buffer and fragment sysctls, its time-synchronisation daemons and the bundle its agent came in."""

    target: str
    arch: str
    cpu_model: str | None
    cpus: int | None
    kernel: str
    glibc: str | None
    nic: JsonObject | None
    interfaces: Sequence[Any]
    sysctl: JsonObject
    sync: JsonObject
    bundle: JsonObject


@dataclass(frozen=True)
class Certificate(Part):
    """A certificate as a record names it: its subject, SHA-256 fingerprint and algorithms (never a key)."""

    subject: str
    sha256: str
    key: str


def _certificates(value: Any) -> dict[str, Certificate]:
    made = {str(k): Certificate.of(v) for k, v in value.items()} if isinstance(value, dict) else {}
    return {k: c for k, c in made.items() if c is not None}


@dataclass(frozen=True)
class GovernanceRule(Part):
    """Where a secured point's protection kinds were read: the governance document, the domain, the domain
    rule (1 = the first) and its topic rule that apply to the point's topics."""

    document: str
    domain: int
    domain_rule: int
    domains: str
    topic_rule: int
    topic_expression: str


@dataclass(frozen=True)
class Security(Part):
    """A secured point (``--security``): its level, where its keys came from, the governance's protection kinds
    and the rule they came from (None in a record from before it was read as XML), the certificates of its CAs
    and of each side's identity (by enclave), the algorithms each side applied."""

    level: str
    keys: str
    protection: Mapping[str, str]
    identity_ca: Certificate
    permissions_ca: Certificate
    identities: Mapping[str, Certificate]
    algorithms: Sides[Mapping[str, str] | None]
    governance: GovernanceRule | None = None
    MADE = {"identity_ca": Certificate.of, "permissions_ca": Certificate.of, "identities": _certificates,
            "algorithms": Sides.of, "governance": GovernanceRule.of}
