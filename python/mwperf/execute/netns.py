"""Emulated hosts on one machine: ``--link netns[:PROFILE]``.

Two network namespaces joined by a veth pair; the publisher runs in the first
(10.77.N.1), the subscriber in the second (10.77.N.2). These addresses exist
only inside the namespaces. A profile shapes the link in both directions:

* rate with tbf on each veth's egress;
* random loss with an nftables ``numgen random`` drop at each namespace's
  ingress (prerouting, priority -300). A drop on the sender's output would
  make sendto() fail with EPERM instead of losing the packet;
* delay and jitter need netem: where the kernel lacks it, a profile with delay
  is refused with that reason (never run without it).

Profiles: ``gige`` (1 Gbit/s), ``fast-ethernet`` (100 Mbit/s), ``wifi``
(60 Mbit/s, 2 % loss), ``lossy:P%`` (loss only), ``none`` (the bare veth),
and the custom form ``rate=100mbit,loss=1%,delay=2ms,jitter=1ms``; a named
profile may be followed by custom keys (``gige,loss=1%``).

``clock_offset=Ns`` (whole seconds, may be negative) gives the second host a
clock of its own: its agents run in a Linux time namespace whose
CLOCK_MONOTONIC is N s ahead (``unshare --time --monotonic N``), so one-way
latency between the two must go through the offset estimate, as between
two real hosts.

Namespaces are named ``mwperf-<pid>-a|b`` after the controller's pid, so
leftovers of a crashed run are found by name and removed (the next run does
it, and ``mwperf doctor --cleanup``). Deleting a namespace removes its veth,
qdiscs and nft table with it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass

from mwperf.options import UsageError

__all__ = ["LinkProfile", "parse_link", "NetnsPair", "stale_namespaces", "remove_stale", "PREFIX"]

PREFIX = "mwperf-"
SUBNET = "10.77"
PROFILES = {
    "none": (None, 0.0),
    "gige": (1000.0, 0.0),
    "fast-ethernet": (100.0, 0.0),
    "wifi": (60.0, 2.0),
}
_RATE = re.compile(r"^(\d+(?:\.\d+)?)\s*(k|m|g)?(?:bit|bps)?$", re.I)


@dataclass(frozen=True)
class LinkProfile:
    name: str
    rate_mbit: float | None = None
    loss_pct: float = 0.0
    delay_ms: float = 0.0
    jitter_ms: float = 0.0
    clock_offset_s: int = 0

    def as_dict(self) -> dict:
        return {"kind": "netns", "profile": self.name, "rate_mbit": self.rate_mbit, "loss_pct": self.loss_pct,
                "delay_ms": self.delay_ms, "jitter_ms": self.jitter_ms, "clock_offset_s": self.clock_offset_s}


def _rate_mbit(text: str, spec: str) -> float:
    m = _RATE.match(text.strip())
    if not m:
        raise UsageError(f"--link {spec}: rate {text}: expected e.g. 100mbit or 1gbit")
    value = float(m.group(1)) * {"k": 1e-3, "m": 1.0, "g": 1e3, None: 1e-6}[(m.group(2) or "").lower() or None]
    if value <= 0:
        raise UsageError(f"--link {spec}: rate {text}: must be positive")
    return value


def _pct(text: str, spec: str, what: str) -> float:
    try:
        value = float(text.strip().rstrip("%"))
    except ValueError:
        raise UsageError(f"--link {spec}: {what} {text}: expected a percentage, e.g. 5%") from None
    if not 0 <= value <= 100:
        raise UsageError(f"--link {spec}: {what} {text}: must be between 0 and 100 %")
    return value


_KEYS = ("rate", "loss", "delay", "jitter", "clock_offset")


def parse_link(spec: str) -> LinkProfile:
    """``netns``, ``netns:PROFILE``; UsageError naming the bad part."""
    kind, _, profile = spec.strip().partition(":")
    if kind != "netns":
        raise UsageError(f"--link {spec}: unknown link kind '{kind}' (netns[:PROFILE])")
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
        raise UsageError(f"--link {spec}: unknown profile '{parts[0]}' (gige, fast-ethernet, wifi, lossy:P%, none, "
                         f"or rate=..,loss=..%,delay=..ms,jitter=..ms,clock_offset=..s)")
    fields: dict[str, str] = {}
    for part in parts:
        key, _, value = part.partition("=")
        if key.strip() not in _KEYS or not value:
            raise UsageError(f"--link {spec}: '{part}': expected rate=..., loss=...%, delay=...ms, jitter=...ms "
                             f"or clock_offset=...s")
        fields[key.strip()] = value.strip()
    ms = {}
    for key in ("delay", "jitter"):
        try:
            ms[key] = float(fields.get(key, "0").removesuffix("ms"))
        except ValueError:
            raise UsageError(f"--link {spec}: {key} {fields[key]}: expected milliseconds, e.g. 2ms") from None
    offset = 0
    if "clock_offset" in fields:
        text = fields["clock_offset"].removesuffix("s")
        if not text.lstrip("-").isdigit() or not -86400 <= int(text) <= 86400:
            raise UsageError(f"--link {spec}: clock_offset {fields['clock_offset']}: expected whole seconds "
                             f"from -86400 to 86400, e.g. 3s (a time namespace's offset)")
        offset = int(text)
    return LinkProfile(profile, _rate_mbit(fields["rate"], spec) if "rate" in fields else rate,
                       _pct(fields["loss"], spec, "loss") if "loss" in fields else loss,
                       ms["delay"], ms["jitter"], offset)


def _run(*argv: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(list(argv), capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=30)
    if check and done.returncode != 0:
        raise OSError(f"{' '.join(argv)}: {(done.stderr or done.stdout).strip() or f'exit {done.returncode}'}")
    return done


def _namespaces() -> list[str]:
    if shutil.which("ip") is None:
        return []
    out = _run("ip", "netns", "list", check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def stale_namespaces() -> list[str]:
    """mwperf's namespaces whose controller (the pid in the name) is gone."""
    stale = []
    for name in _namespaces():
        m = re.fullmatch(rf"{PREFIX}(\d+)-[ab]", name)
        if m and not os.path.exists(f"/proc/{m.group(1)}"):
            stale.append(name)
    return stale


def remove_stale() -> list[str]:
    removed = []
    for name in stale_namespaces():
        if _run("ip", "netns", "delete", name, check=False).returncode == 0:
            removed.append(name)
    return removed


class NetnsPair:
    """The two namespaces of a run; a context manager that always removes them."""

    def __init__(self, profile: LinkProfile, index: int = 0):
        self.profile = profile
        pid = os.getpid()
        self.ns = (f"{PREFIX}{pid}-a", f"{PREFIX}{pid}-b")
        self.ifname = (f"mwa{pid % 1000000}", f"mwb{pid % 1000000}")
        third = (pid + index) % 250 + 1
        self.addr = (f"{SUBNET}.{third}.1", f"{SUBNET}.{third}.2")

    @staticmethod
    def check_possible(profile: LinkProfile | None = None) -> None:
        """UsageError with the reason when namespaces cannot be made here."""
        if os.geteuid() != 0:
            raise UsageError("--link netns: needs root (network namespaces, tc, nft)")
        for tool in ("ip", "tc", "nft") + (("unshare",) if profile is not None and profile.clock_offset_s else ()):
            if shutil.which(tool) is None:
                raise UsageError(f"--link netns: '{tool}' is not installed (scripts/install-deps.sh installs it)")

    def __enter__(self) -> "NetnsPair":
        self.check_possible(self.profile)
        try:
            self._create()
        except BaseException:
            self.remove()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.remove()

    def _create(self) -> None:
        a, b = self.ns
        va, vb = self.ifname
        for ns in self.ns:
            _run("ip", "netns", "add", ns)
        _run("ip", "link", "add", va, "netns", a, "type", "veth", "peer", "name", vb, "netns", b)
        for ns, dev, addr in ((a, va, self.addr[0]), (b, vb, self.addr[1])):
            _run("ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", dev)
            _run("ip", "-n", ns, "link", "set", "lo", "up")
            _run("ip", "-n", ns, "link", "set", dev, "up")
        p = self.profile
        if p.delay_ms or p.jitter_ms:
            netem = ["netem", "delay", f"{p.delay_ms}ms"] + ([f"{p.jitter_ms}ms"] if p.jitter_ms else [])
            if p.rate_mbit:
                netem += ["rate", f"{p.rate_mbit}mbit"]
            done = _run("tc", "-n", a, "qdisc", "add", "dev", va, "root", *netem, check=False)
            if done.returncode != 0:
                raise UsageError(f"--link netns:{p.name}: delay and jitter need netem, which this kernel does not "
                                 f"have ({done.stderr.strip() or 'tc failed'}); use a profile without them")
            _run("tc", "-n", b, "qdisc", "add", "dev", vb, "root", *netem)
        elif p.rate_mbit:
            burst = max(32 * 1024, int(p.rate_mbit * 1e6 / 8 / 250))  # a 4 ms bucket at least
            for ns, dev in ((a, va), (b, vb)):
                _run("tc", "-n", ns, "qdisc", "add", "dev", dev, "root", "tbf", "rate", f"{p.rate_mbit}mbit",
                     "burst", str(burst), "latency", "50ms")
        if p.loss_pct > 0:
            for ns, dev in ((a, va), (b, vb)):
                script = (f"table inet mwperf_loss {{\n chain pre {{\n  type filter hook prerouting priority -300;\n"
                          f"  iifname \"{dev}\" numgen random mod 10000 < {int(round(p.loss_pct * 100))} drop\n"
                          f" }}\n}}\n")
                done = subprocess.run(["ip", "netns", "exec", ns, "nft", "-f", "-"], input=script, text=True,
                                      capture_output=True, timeout=30)
                if done.returncode != 0:
                    raise OSError(f"nft in {ns}: {done.stderr.strip()}")

    def remove(self) -> None:
        for ns in self.ns:
            _run("ip", "netns", "delete", ns, check=False)

    @property
    def same_clock(self) -> bool:
        return self.profile.clock_offset_s == 0

    def command(self, role: str, argv: list[str]) -> list[str]:
        return self.exec_prefix(role) + argv

    def wrap(self, role: str, argv: list[str]) -> list[str]:
        """The agent's argv in the role's namespace, with its addresses."""
        return self.exec_prefix(role) + argv + self.agent_args(role)

    def as_dict(self) -> dict:
        return self.profile.as_dict()

    def exec_prefix(self, role: str) -> list[str]:
        """The argv prefix that runs a command in the role's namespace (the
        subscriber's also in its time namespace, with a clock offset)."""
        prefix = ["ip", "netns", "exec", self.ns[0 if role == "pub" else 1]]
        if role == "sub" and self.profile.clock_offset_s:
            prefix += ["unshare", "--time", "--monotonic", str(self.profile.clock_offset_s), "--"]
        return prefix

    def agent_args(self, role: str) -> list[str]:
        """Addresses for the agent: the sub binds its own, the pub sends to the sub's;
        DDS uses the namespace's veth and the other side as unicast peer."""
        mine, other = (0, 1) if role == "pub" else (1, 0)
        return ["--host", self.addr[1], "--nic", self.ifname[mine], "--peer", self.addr[other], "--isolated", "1"]
