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

The profile (:class:`mwperf.plan.where.LinkProfile`) is validated with the
options. A ``clock_offset`` runs the second host's agents in a Linux time
namespace whose CLOCK_MONOTONIC is N s ahead (``unshare --time --monotonic
N``), so one-way latency between the two goes through the offset estimate.

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

from mwperf.errors import UsageError
from mwperf.execute.placement import Placement
from mwperf.plan.where import LinkProfile

__all__ = ["NetnsPair", "stale_namespaces", "remove_stale", "nft_script", "PREFIX"]

PREFIX = "mwperf-"
SUBNET = "10.77"


def _run(*argv: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(list(argv), capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=30)
    if check and done.returncode != 0:
        raise OSError(f"{' '.join(argv)}: {(done.stderr or done.stdout).strip() or f'exit {done.returncode}'}")
    return done


def nft_script(ns: str, script: str) -> None:
    """Loads an nft script in namespace ``ns``; OSError with nft's reason."""
    done = subprocess.run(["ip", "netns", "exec", ns, "nft", "-f", "-"], input=script, text=True,
                          capture_output=True, timeout=30)
    if done.returncode != 0:
        raise OSError(f"nft in {ns}: {done.stderr.strip()}")


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


class NetnsPair(Placement):
    """The two namespaces of a point; a context manager that always removes them."""

    def __init__(self, profile: LinkProfile, index: int = 0):
        self.profile = profile
        self.name = profile.name
        pid = os.getpid()
        self.ns = (f"{PREFIX}{pid}-a", f"{PREFIX}{pid}-b")
        self.ifname = (f"mwa{pid % 1000000}", f"mwb{pid % 1000000}")
        third = (pid + index) % 250 + 1
        self.addr = (f"{SUBNET}.{third}.1", f"{SUBNET}.{third}.2")

    @staticmethod
    def check_possible(profile: LinkProfile | None = None) -> None:
        """UsageError with the reason when namespaces cannot be made here."""
        if os.geteuid() != 0:
            raise UsageError("--link", "netns", "needs root (network namespaces, tc, nft)")
        for tool in ("ip", "tc", "nft") + (("unshare",) if profile is not None and profile.clock_offset_s else ()):
            if shutil.which(tool) is None:
                raise UsageError("--link", "netns", f"'{tool}' is not installed (scripts/install-deps.sh installs it)")

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
                raise UsageError("--link", f"netns:{p.name}", f"delay and jitter need netem, which this kernel does "
                                 f"not have ({done.stderr.strip() or 'tc failed'}); use a profile without them")
            _run("tc", "-n", b, "qdisc", "add", "dev", vb, "root", *netem)
        elif p.rate_mbit:
            burst = max(32 * 1024, int(p.rate_mbit * 1e6 / 8 / 250))  # a 4 ms bucket at least
            for ns, dev in ((a, va), (b, vb)):
                _run("tc", "-n", ns, "qdisc", "add", "dev", dev, "root", "tbf", "rate", f"{p.rate_mbit}mbit",
                     "burst", str(burst), "latency", "50ms")
        if p.loss_pct > 0:
            for ns, dev in ((a, va), (b, vb)):
                share = int(round(p.loss_pct * 100))  # of 10000; numgen's values are 0-9999, so 100 % is every packet
                which = "" if share >= 10000 else f"numgen random mod 10000 < {share} "
                script = (f"table inet mwperf_loss {{\n chain pre {{\n  type filter hook prerouting priority -300;\n"
                          f"  iifname \"{dev}\" {which}drop\n }}\n}}\n")
                nft_script(ns, script)

    def remove(self) -> None:
        for ns in self.ns:
            _run("ip", "netns", "delete", ns, check=False)

    @property
    def same_clock(self) -> bool:
        return self.profile.clock_offset_s == 0

    def command(self, role: str, argv: list[str]) -> list[str]:
        return self.exec_prefix(role) + argv

    def address(self, role: str) -> str:
        return self.addr[0 if role == "pub" else 1]

    def as_dict(self) -> dict:
        return self.profile.as_dict()

    def exec_prefix(self, role: str) -> list[str]:
        """The argv prefix that runs a command in the role's namespace (the
        subscriber's also in its time namespace, with a clock offset)."""
        prefix = ["ip", "netns", "exec", self.ns[0 if role == "pub" else 1]]
        if role == "sub" and self.profile.clock_offset_s:
            prefix += ["unshare", "--time", "--monotonic", str(self.profile.clock_offset_s), "--"]
        return prefix

    def agent_args(self, role: str, nic: bool = True) -> list[str]:
        """Addresses for the agent: the sub binds its own, the pub sends to the sub's;
        DDS uses the namespace's veth and the other side as unicast peer."""
        mine, other = (0, 1) if role == "pub" else (1, 0)
        return ["--host", self.addr[1], *(["--nic", self.ifname[mine]] if nic else []), "--peer", self.addr[other],
                "--isolated", "1"]
