"""Two real hosts: the agents of ``--hosts pub=user@hostA,sub=user@hostB``.

Each agent is started with the system's OpenSSH client; the control channel
(JSON lines) is the ssh session's stdin/stdout, the data travels between the
hosts' addresses. The remote command is the agent's argument list, each
argument quoted for the remote shell (ssh hands the remote side one string):
no shell string is ever built from user input unquoted.

The ssh sessions to one host share one connection (OpenSSH's ControlMaster):
a point opens four or more (each side's clock exchange, each agent), and
without sharing each pays a key exchange and an authentication. The master
sockets are in a directory of this process's own (``mwperf-ssh-PID-*`` in the
temporary directory, 0700); :func:`close_shared_connections` ends the masters
at the end of the run; a crashed controller's end by themselves
:data:`CONTROL_PERSIST_S` after their last session, and the next run removes
its directory. Options of the user's own about sharing
(``MWPERF_SSH_OPTIONS`` naming a Control* option, ``-S``, ``-M``) are theirs.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

from mwperf.execute.placement import Placement
from mwperf.plan.where import HostPair

__all__ = ["SshHosts", "close_shared_connections", "ssh_argv", "remove_stale_dirs"]

#: How long a master outlives its last session (a crashed controller's masters end by themselves).
CONTROL_PERSIST_S = 30
_DIR_PREFIX = "mwperf-ssh-"
_USERS_OWN = re.compile(r"^-[MS]|control(master|path|persist)", re.I)


class _SharedConnections:
    """The run's master connections, one per host and option set."""

    def __init__(self) -> None:
        self.dir: Path | None = None
        self.used: set[tuple[str, tuple[str, ...]]] = set()

    def options(self, target: str, user: tuple[str, ...]) -> list[str]:
        if any(_USERS_OWN.search(o) for o in user):
            return []
        if self.dir is None or not self.dir.is_dir():
            try:
                self.dir = _own_dir()
            except OSError:  # no writable temporary directory: each session its own connection, as before
                return []
        self.used.add((target, user))
        return self._control()

    def _control(self) -> list[str]:
        return ["-o", "ControlMaster=auto", "-o", f"ControlPath={self.dir}/%C",
                "-o", f"ControlPersist={CONTROL_PERSIST_S}"]

    def close(self) -> None:
        for target, user in sorted(self.used):
            try:
                subprocess.run(["ssh", *user, *self._control(), "-O", "exit", target],
                               stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
            except (OSError, subprocess.SubprocessError):
                pass  # the master ends by itself CONTROL_PERSIST_S after its last session
        self.used.clear()
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None


def _own_dir() -> Path:
    """A new ``mwperf-ssh-PID-*`` (0700), after removing this user's of controllers no longer running."""
    tmp = tempfile.gettempdir()
    tmp = tmp if len(tmp) <= 40 else "/tmp"  # room for /mwperf-ssh-PID-xxxxxxxx/ + 40 (%C) in a socket's 108
    remove_stale_dirs(Path(tmp), _DIR_PREFIX)
    return Path(tempfile.mkdtemp(prefix=f"{_DIR_PREFIX}{os.getpid()}-", dir=tmp))


def remove_stale_dirs(parent: Path, prefix: str) -> None:
    """This user's ``PREFIX<pid>-*`` directories in ``parent`` whose controller (that pid) no longer runs."""
    for old in parent.glob(f"{prefix}*-*"):
        pid = old.name[len(prefix):].split("-")[0]
        try:
            if pid.isdigit() and not Path(f"/proc/{pid}").exists() and old.lstat().st_uid == os.getuid():
                shutil.rmtree(old, ignore_errors=True)
        except OSError:
            pass


_SHARED = _SharedConnections()


def close_shared_connections() -> None:
    """End this process's ssh masters and remove their directory (the end of a run)."""
    _SHARED.close()


def ssh_argv(target: str, options: tuple[str, ...], argv: list[str]) -> list[str]:
    """The local argv that runs ``argv`` on ``target`` (``user@host``), over the run's shared connection."""
    return ["ssh", *options, *_SHARED.options(target, options), target, "--", shlex.join(argv)]


class SshHosts(Placement):
    """The pair of hosts of a point; nothing to set up or take down."""

    name = "ssh"
    same_clock = False

    def __init__(self, hosts: HostPair):
        self.hosts = hosts

    def command(self, role: str, argv: list[str]) -> list[str]:
        """The local argv that runs ``argv`` on the role's host."""
        return ssh_argv(self.hosts.pub if role == "pub" else self.hosts.sub, tuple(self.hosts.ssh_options), argv)

    def agent(self, role: str, default: str) -> str:
        """The agent where ``role`` runs: the bundle's put there (:mod:`mwperf.hosts`), else ``default``."""
        agents = self.hosts.agents
        return default if agents is None else agents[0 if role == "pub" else 1]

    def address(self, role: str) -> str:
        return self.hosts.data[0 if role == "pub" else 1]

    def sync(self) -> dict | None:
        """Each host's own synchronisation daemons, as it said before the first point (unknown: not asked)."""
        facts = self.hosts.facts
        return {} if facts is None else {"pub": facts[0].get("sync"), "sub": facts[1].get("sync")}

    def carries_env(self) -> bool:
        return False  # ssh hands the remote command no environment of ours

    def agent_args(self, role: str, nic: bool = True) -> list[str]:
        """The sub binds its data address, the pub sends to it; each peers with the other; a middleware that
        chooses an interface uses --nic, else the one its host carries its data address on."""
        data = self.hosts.data
        args = ["--host", data[1], "--peer", data[0 if role == "sub" else 1]]
        chosen = self._nic(role) if nic else None
        args += ["--nic", chosen] if chosen else []
        return args + (["--isolated", "1"] if self._isolated(role) else [])

    def _isolated(self, role: str) -> bool:
        """The host's only interfaces are lo and its data link (as a namespace's): nothing to confine DDS to."""
        facts = self.hosts.facts[0 if role == "pub" else 1] if self.hosts.facts is not None else {}
        nic = (facts.get("nic") or {}).get("name")
        return bool(nic) and set(facts.get("interfaces") or ()) == {"lo", nic}

    def _nic(self, role: str) -> str | None:
        """--nic, else the interface the role's host said its data address is on (mwperf.hosts)."""
        if self.hosts.nic or self.hosts.facts is None:
            return self.hosts.nic
        found = self.hosts.facts[0 if role == "pub" else 1].get("nic")
        return found.get("name") if isinstance(found, dict) else None

    def as_dict(self) -> dict:
        return self.hosts.as_dict()
