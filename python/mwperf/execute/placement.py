"""Where one point's two agents run: the one interface the runner asks.

A :class:`Placement` is a context manager made for one point: entering it
sets the place up (a namespace pair is created), leaving it always takes it
down. Inside, it turns an argument list into one that runs where a role
(``pub`` or ``sub``) runs, and gives the agent of that role its addresses.
Three implementations:

* :class:`Local`: both agents on this host, on loopback (no option);
* :class:`mwperf.execute.netns.NetnsPair`: two emulated hosts joined by a
  shaped veth pair (``--link netns[:PROFILE]``);
* :class:`mwperf.execute.ssh.SshHosts`: two real hosts over ssh (``--hosts``).

:func:`mwperf.execute.point.placement_for` is the only place that looks at
which one the options chose.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

__all__ = ["Placement", "Local"]


class Placement(ABC):
    """Where the publisher and the subscriber of one point run."""

    #: Names the place in a failure (``link gige: ...``).
    name: str = ""
    #: Each side on a host of its own: the clocks are compared before the
    #: point, and shared memory, which does not cross hosts, is no transport.
    two_hosts: bool = True
    @property
    def same_clock(self) -> bool:
        """Both sides read one clock (so one-way stamps need no offset)."""
        return True

    def __enter__(self) -> "Placement":
        return self

    def __exit__(self, *exc) -> None:
        """Nothing to take down unless the place was made for the point."""
        return None

    @abstractmethod
    def command(self, role: str, argv: list[str]) -> list[str]:
        """The local argument list that runs ``argv`` where ``role`` runs."""

    @abstractmethod
    def address(self, role: str) -> str:
        """The address of the role's host on the data network (a service binds it)."""

    def agent(self, role: str, default: str) -> str:
        """The path of the agent where ``role`` runs (the controller's, ``default``, unless the hosts have their
        own)."""
        return default

    def sync(self) -> dict | None:
        """The hosts' time-synchronisation daemons, as each said (None: this host's, which the place shares)."""
        return None

    def carries_env(self) -> bool:
        """True when a process started by :meth:`command` inherits this process's
        environment (else it is given with ``env NAME=VALUE`` in the argv)."""
        return True

    @abstractmethod
    def agent_args(self, role: str, nic: bool = True) -> list[str]:
        """The addresses the agent of ``role`` binds, sends to and peers with
        (``nic``: and its interface, for a middleware that chooses one)."""

    def wrap(self, role: str, argv: list[str], nic: bool = True) -> list[str]:
        """The agent's argument list, run where the role runs, with its addresses."""
        return self.command(role, argv + self.agent_args(role, nic))

    @abstractmethod
    def as_dict(self) -> dict | None:
        """The record's ``link`` (None on one host)."""


class Local(Placement):
    """Both agents on this host: loopback addresses are the agents' defaults."""

    name = "local"
    two_hosts = False

    def command(self, role: str, argv: list[str]) -> list[str]:
        return argv

    def address(self, role: str) -> str:
        return "127.0.0.1"

    def agent_args(self, role: str, nic: bool = True) -> list[str]:
        return []

    def as_dict(self) -> None:
        return None
