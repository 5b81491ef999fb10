"""Real hosts: ``--hosts pub=user@hostA,sub=user@hostB``.

Each agent is started with the system's OpenSSH client; the control channel
(JSON lines) is the ssh session's stdin/stdout, the data travels between the
hosts' addresses. The remote command is the agent's argument list, each
argument quoted for the remote shell (ssh hands the remote side one string):
no shell string is ever built from user input unquoted. The data address of a
side is its host part (an IPv4 address) unless ``--data pub=IP,sub=IP`` says
otherwise; ``--nic`` names the interface DDS uses on both hosts.
"""

from __future__ import annotations

import ipaddress
import os
import re
import shlex
from dataclasses import dataclass, field

from mwperf.options import UsageError

__all__ = ["SshHosts", "parse_hosts", "SSH_OPTIONS"]

#: Never ask (a benchmark has no terminal), fail fast, keep the session alive.
SSH_OPTIONS = ("-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-o", "ServerAliveInterval=5")
_TARGET = re.compile(r"^(?:[A-Za-z0-9._-]+@)?[A-Za-z0-9.:_-]+$")


@dataclass(frozen=True)
class SshHosts:
    pub: str
    sub: str
    data: tuple[str, str]  # data addresses of pub and sub
    nic: str | None = None
    ssh_options: tuple[str, ...] = field(default=SSH_OPTIONS)

    same_clock = False

    def command(self, role: str, argv: list[str]) -> list[str]:
        """The local argv that runs ``argv`` on the role's host."""
        target = self.pub if role == "pub" else self.sub
        return ["ssh", *self.ssh_options, target, "--", shlex.join(argv)]

    def wrap(self, role: str, argv: list[str]) -> list[str]:
        """The agent's argv on the role's host, with the data addresses."""
        other = 0 if role == "sub" else 1
        remote = argv + ["--host", self.data[1], "--peer", self.data[other]]
        if self.nic:
            remote += ["--nic", self.nic]
        return self.command(role, remote)

    def __enter__(self) -> "SshHosts":
        return self

    def __exit__(self, *exc) -> None:
        pass

    reverse: bool = False  # --direction both: the second of the pair

    def reversed(self) -> "SshHosts":
        """The other direction: publisher and subscriber hosts swapped."""
        return SshHosts(self.sub, self.pub, (self.data[1], self.data[0]), self.nic, self.ssh_options, not self.reverse)

    def as_dict(self) -> dict:
        return {"kind": "ssh", "pub": self.pub, "sub": self.sub, "data": list(self.data), "nic": self.nic,
                "direction": "reverse" if self.reverse else "forward"}


def _host_part(target: str) -> str:
    return target.rsplit("@", 1)[-1]


def parse_hosts(spec: str, data: str | None = None, nic: str | None = None,
                ssh_options: tuple[str, ...] | None = None) -> SshHosts:
    """``pub=user@hostA,sub=user@hostB``; UsageError naming the bad part.
    ``$MWPERF_SSH_OPTIONS`` adds ssh options (e.g. ``-i KEY``) after the defaults."""
    if ssh_options is None:
        ssh_options = SSH_OPTIONS + tuple(shlex.split(os.environ.get("MWPERF_SSH_OPTIONS", "")))
    sides: dict[str, str] = {}
    for part in spec.split(","):
        role, _, target = part.partition("=")
        role, target = role.strip(), target.strip()
        if role not in ("pub", "sub") or not target:
            raise UsageError(f"--hosts {spec}: '{part}': expected pub=USER@HOST,sub=USER@HOST")
        if not _TARGET.match(target) or target.startswith("-"):
            raise UsageError(f"--hosts {spec}: '{target}' is not a [user@]host")
        sides[role] = target
    if set(sides) != {"pub", "sub"}:
        raise UsageError(f"--hosts {spec}: needs both pub= and sub=")
    addresses = {role: _host_part(target) for role, target in sides.items()}
    if data is not None:
        for part in data.split(","):
            role, _, addr = part.partition("=")
            if role.strip() not in ("pub", "sub"):
                raise UsageError(f"--data {data}: '{part}': expected pub=IP,sub=IP")
            addresses[role.strip()] = addr.strip()
    for role, addr in addresses.items():
        try:
            ipaddress.IPv4Address(addr)
        except ValueError:
            raise UsageError(f"--hosts {spec}: {role} data address '{addr}' is not an IPv4 address "
                             f"(give it with --data pub=IP,sub=IP)") from None
    return SshHosts(sides["pub"], sides["sub"], (addresses["pub"], addresses["sub"]), nic, ssh_options)
