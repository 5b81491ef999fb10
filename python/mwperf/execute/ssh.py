"""Two real hosts: the agents of ``--hosts pub=user@hostA,sub=user@hostB``.

Each agent is started with the system's OpenSSH client; the control channel
(JSON lines) is the ssh session's stdin/stdout, the data travels between the
hosts' addresses. The remote command is the agent's argument list, each
argument quoted for the remote shell (ssh hands the remote side one string):
no shell string is ever built from user input unquoted.
"""

from __future__ import annotations

import shlex

from mwperf.execute.placement import Placement
from mwperf.plan.where import HostPair

__all__ = ["SshHosts"]


class SshHosts(Placement):
    """The pair of hosts of a point; nothing to set up or take down."""

    name = "ssh"
    same_clock = False

    def __init__(self, hosts: HostPair):
        self.hosts = hosts

    def command(self, role: str, argv: list[str]) -> list[str]:
        """The local argv that runs ``argv`` on the role's host."""
        target = self.hosts.pub if role == "pub" else self.hosts.sub
        return ["ssh", *self.hosts.ssh_options, target, "--", shlex.join(argv)]

    def address(self, role: str) -> str:
        return self.hosts.data[0 if role == "pub" else 1]

    def carries_env(self) -> bool:
        return False  # ssh hands the remote command no environment of ours

    def agent_args(self, role: str, nic: bool = True) -> list[str]:
        """The sub binds its data address, the pub sends to it; each peers with the other."""
        data = self.hosts.data
        args = ["--host", data[1], "--peer", data[0 if role == "sub" else 1]]
        return args + (["--nic", self.hosts.nic] if self.hosts.nic and nic else [])

    def as_dict(self) -> dict:
        return self.hosts.as_dict()
