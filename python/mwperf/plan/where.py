"""Where the two sides of a point run, as the user chose it: on this host
(neither option), on two emulated hosts (``--link netns[:PROFILE]``, a
:class:`LinkProfile`) or on two real hosts over ssh (``--hosts
pub=user@hostA,sub=user@hostB``, a :class:`HostPair`).

Only the values and their validation live here; making the namespaces or
opening the ssh sessions is :mod:`mwperf.execute.placement`'s.

Link profiles: ``gige`` (1 Gbit/s), ``fast-ethernet`` (100 Mbit/s), ``wifi``
(60 Mbit/s, 2 % loss), ``lossy:P%`` (loss only), ``none`` (the bare veth),
and the custom form ``rate=100mbit,loss=1%,delay=2ms,jitter=1ms``; a named
profile may be followed by custom keys (``gige,loss=1%``). ``clock_offset=Ns``
(whole seconds, may be negative) gives the second host a clock of its own
(a Linux time namespace), so one-way latency between the two must go
through the offset estimate, as between two real hosts.

Hosts: the data address of a side is its host part (an IPv4 address) unless
``--data pub=IP,sub=IP`` says otherwise; ``--nic`` names the interface DDS
uses on both hosts; ``$MWPERF_SSH_OPTIONS`` adds ssh options (``-i KEY``).
"""

from __future__ import annotations

import ipaddress
import os
import re
import shlex
from dataclasses import dataclass, field

from mwperf.display import shown
from mwperf.errors import UnitError, UsageError
from mwperf.units import parse_duration_ns

__all__ = ["LinkProfile", "parse_link", "HostPair", "parse_hosts", "SSH_OPTIONS", "user_ssh_options", "check_host_text",
           "CONTROL_CHARACTER"]

PROFILES = {
    "none": (None, 0.0),
    "gige": (1000.0, 0.0),
    "fast-ethernet": (100.0, 0.0),
    "wifi": (60.0, 2.0),
}
_RATE = re.compile(r"^(\d+(?:\.\d+)?)\s*(k|m|g)?(?:bit|bps)?$", re.I)
_KEYS = ("rate", "loss", "delay", "jitter", "clock_offset")
#: Never ask (a benchmark has no terminal), fail fast, keep the session alive.
SSH_OPTIONS = ("-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-o", "ServerAliveInterval=5")
_TARGET = re.compile(r"^(?:[A-Za-z0-9._-]+@)?[A-Za-z0-9.:_-]+$")
#: A control character (C0, DEL, C1): never in a host string, a path or an option sent to a host.
CONTROL_CHARACTER = re.compile(r"[\x00-\x1f\x7f-\x9f]")


@dataclass(frozen=True)
class LinkProfile:
    """The shaping of a namespace link, the same in both directions."""

    name: str
    rate_mbit: float | None = None
    loss_pct: float = 0.0
    delay_ms: float = 0.0
    jitter_ms: float = 0.0
    clock_offset_s: int = 0

    def as_dict(self) -> dict:
        return {"kind": "netns", "profile": self.name, "rate_mbit": self.rate_mbit, "loss_pct": self.loss_pct,
                "delay_ms": self.delay_ms, "jitter_ms": self.jitter_ms, "clock_offset_s": self.clock_offset_s}


#: The range of a link's rate (Mbit/s): tbf's and netem's from 10 kbit/s, to 100 Gbit/s (no veth goes faster).
RATE_RANGE_MBIT = (0.01, 100_000.0)
#: The most delay or jitter a link takes: 10 s (netem holds every packet that long).
MAX_DELAY_MS = 10_000.0


def _rate_mbit(text: str, spec: str) -> float:
    m = _RATE.match(text.strip())
    if not m:
        raise UsageError("--link", spec, f"rate {text}: expected e.g. 100mbit or 1gbit")
    value = float(m.group(1)) * {"k": 1e-3, "m": 1.0, "g": 1e3, None: 1e-6}[(m.group(2) or "").lower() or None]
    if value <= 0:
        raise UsageError("--link", spec, f"rate {text}: must be positive")
    low, high = RATE_RANGE_MBIT
    if not low <= value <= high:
        raise UsageError("--link", spec, f"rate {text}: must be from 10kbit to 100gbit")
    return value


def _delay_ms(text: str, spec: str, what: str) -> float:
    """A delay or jitter in milliseconds, by the command line's duration parser (a bare number is
    milliseconds): never negative, at most MAX_DELAY_MS."""
    value = text.strip()
    try:
        ns = parse_duration_ns(value + "ms" if value and (value[-1].isdigit() or value[-1] == ".") else value,
                               allow_zero=True)
    except UnitError as exc:
        raise UsageError("--link", spec, f"{what} {text}: expected milliseconds, e.g. 2ms ({exc})") from None
    if ns > MAX_DELAY_MS * 1e6:
        raise UsageError("--link", spec, f"{what} {text}: must be at most {MAX_DELAY_MS / 1000:g}s")
    return ns / 1e6


def _pct(text: str, spec: str, what: str) -> float:
    try:
        value = float(text.strip().rstrip("%"))
    except ValueError:
        raise UsageError("--link", spec, f"{what} {text}: expected a percentage, e.g. 5%") from None
    if not 0 <= value <= 100:
        raise UsageError("--link", spec, f"{what} {text}: must be between 0 and 100 %")
    return value


def parse_link(spec: str) -> LinkProfile:
    """``netns``, ``netns:PROFILE``; UsageError naming the bad part."""
    kind, _, profile = spec.strip().partition(":")
    if kind != "netns":
        raise UsageError("--link", spec, f"unknown link kind '{kind}' (netns[:PROFILE])")
    profile = profile.strip() or "none"
    parts = [p.strip() for p in profile.split(",")]
    rate, loss = None, 0.0
    if parts[0] in PROFILES:
        rate, loss = PROFILES[parts[0]]
        parts = parts[1:]
    elif parts[0].startswith("lossy:"):
        loss = _pct(parts[0][6:], spec, "loss")
        parts = parts[1:]
    elif "=" not in parts[0]:
        raise UsageError("--link", spec, f"unknown profile '{parts[0]}' (gige, fast-ethernet, wifi, lossy:P%, none, "
                                         f"or rate=..,loss=..%,delay=..ms,jitter=..ms,clock_offset=..s)")
    fields: dict[str, str] = {}
    for part in parts:
        key, _, value = part.partition("=")
        if key.strip() not in _KEYS or not value:
            raise UsageError("--link", spec, f"'{part}': expected rate=..., loss=...%, delay=...ms, jitter=...ms "
                                             f"or clock_offset=...s")
        fields[key.strip()] = value.strip()
    ms = {key: _delay_ms(fields[key], spec, key) if key in fields else 0.0 for key in ("delay", "jitter")}
    offset = 0
    if "clock_offset" in fields:
        text = fields["clock_offset"].removesuffix("s")
        if not text.lstrip("-").isdigit() or not -86400 <= int(text) <= 86400:
            raise UsageError("--link", spec, f"clock_offset {fields['clock_offset']}: expected whole seconds "
                                             f"from -86400 to 86400, e.g. 3s (a time namespace's offset)")
        offset = int(text)
    return LinkProfile(profile, _rate_mbit(fields["rate"], spec) if "rate" in fields else rate,
                       _pct(fields["loss"], spec, "loss") if "loss" in fields else loss,
                       ms["delay"], ms["jitter"], offset)


@dataclass(frozen=True)
class HostPair:
    """The publisher's and the subscriber's host (ssh targets), their data
    addresses, and the direction of this pair (``--direction both`` runs
    every point on the pair and on its reverse)."""

    pub: str
    sub: str
    data: tuple[str, str]  # data addresses of pub and sub
    nic: str | None = None
    ssh_options: tuple[str, ...] = field(default=SSH_OPTIONS)
    reverse: bool = False  # --direction both: the second of the pair
    #: the agent on the pub's and the sub's host (the bundles put in place, mwperf.hosts); None: --agent's path
    agents: tuple[str, str] | None = None
    #: what each host is (the record's ``hosts``: mwperf.hosts), once asked
    facts: tuple[dict, dict] | None = field(default=None, compare=False, hash=False)
    #: the pair's name in a lab (``pub:sub``, hosts of an inventory: mwperf.lab), the records' ``host_pair``
    name: str | None = None

    def reversed(self) -> "HostPair":
        """The other direction: publisher and subscriber hosts swapped."""
        return HostPair(self.sub, self.pub, (self.data[1], self.data[0]), self.nic, self.ssh_options, not self.reverse,
                        None if self.agents is None else (self.agents[1], self.agents[0]),
                        None if self.facts is None else (self.facts[1], self.facts[0]),
                        None if self.name is None else ":".join(reversed(self.name.split(":", 1))))

    def as_dict(self) -> dict:
        return {"kind": "ssh", "pub": self.pub, "sub": self.sub, "data": list(self.data), "nic": self.nic,
                "direction": "reverse" if self.reverse else "forward"}


def user_ssh_options() -> tuple[str, ...]:
    """``$MWPERF_SSH_OPTIONS`` split as a shell would (``-i "my key"``); UsageError naming it when it cannot be
    (an unbalanced quote) or when it holds a control character (a newline would end the command line)."""
    text = os.environ.get("MWPERF_SSH_OPTIONS", "")
    try:
        options = tuple(shlex.split(text))
    except ValueError as exc:
        raise UsageError("MWPERF_SSH_OPTIONS", shown(text, 120), f"not ssh options as a shell splits them ({exc})"
                         ) from None
    bad = next((o for o in options if CONTROL_CHARACTER.search(o)), None)
    if bad is not None:
        raise UsageError("MWPERF_SSH_OPTIONS", shown(text, 120), f"'{shown(bad, 60)}' holds a control character")
    return options


def check_host_text(option: str, value: str | None) -> None:
    """UsageError when ``value`` (a path, an interface, an option for a far host: ``--remote-dir``, ``--agent``,
    ``--nic``) holds a control character: a newline in a far host's command line ends it there, and what
    follows would run as a command of its own (``--remote-dir $'x\\n/y'`` installed into ``x``)."""
    if value is not None and CONTROL_CHARACTER.search(value):
        raise UsageError(option, shown(value, 120), "holds a control character (a newline, a tab, an escape): "
                                                   "refused before anything runs on a host")


def _host_part(target: str) -> str:
    return target.rsplit("@", 1)[-1]


def parse_hosts(spec: str, data: str | None = None, nic: str | None = None,
                ssh_options: tuple[str, ...] | None = None) -> HostPair:
    """``pub=user@hostA,sub=user@hostB``; UsageError naming the bad part."""
    if ssh_options is None:
        ssh_options = SSH_OPTIONS + user_ssh_options()
    sides: dict[str, str] = {}
    for part in spec.split(","):
        role, _, target = part.partition("=")
        role, target = role.strip(), target.strip()
        if role not in ("pub", "sub") or not target:
            raise UsageError("--hosts", spec, f"'{part}': expected pub=USER@HOST,sub=USER@HOST")
        if not _TARGET.match(target) or target.startswith("-"):
            raise UsageError("--hosts", spec, f"'{target}' is not a [user@]host")
        sides[role] = target
    if set(sides) != {"pub", "sub"}:
        raise UsageError("--hosts", spec, "needs both pub= and sub=")
    check_host_text("--nic", nic)
    addresses = {role: _host_part(target) for role, target in sides.items()}
    if data is not None:
        for part in data.split(","):
            role, _, addr = part.partition("=")
            if role.strip() not in ("pub", "sub"):
                raise UsageError("--data", data, f"'{part}': expected pub=IP,sub=IP")
            addresses[role.strip()] = addr.strip()
    for role, addr in addresses.items():
        try:
            ipaddress.IPv4Address(addr)
        except ValueError:
            raise UsageError("--hosts", spec, f"{role} data address '{addr}' is not an IPv4 address "
                                              f"(give it with --data pub=IP,sub=IP)") from None
    return HostPair(sides["pub"], sides["sub"], (addresses["pub"], addresses["sub"]), nic, ssh_options)
