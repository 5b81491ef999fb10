"""The processes of a test session: their own group id (so nftables can tell
the session's packets from the machine's, and iceoryx finds a named group) and
Ctrl-C as in a terminal, however the suite was started. Entered in conftest's
pytest_configure, before any process is started."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path


def enter_session() -> None:
    _enter_session_gid()
    _interruptible()


def leave_session() -> None:
    _leave_session_gid()


def _interruptible() -> None:
    """Ctrl-C as in a terminal, however the suite was started.

    A shell without job control (``nohup make test &``, some CI runners) starts its
    children with SIGINT ignored; Python then installs no KeyboardInterrupt handler,
    and every process a test starts inherits the ignore, so the tests that interrupt
    a run would measure how the suite was launched. A handler set here is reset to
    the default in every child at exec, as a terminal's would be.
    """
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def session_gid() -> int:
    """The group id this test session runs under (set in pytest_configure
    when root): every process the tests start inherits it, so nftables can
    tell the project's own packets (``meta skgid``) from whatever else the
    machine sends meanwhile (a package download, another test session). One
    per session (from the pid), away from the system's and users' groups."""
    return SESSION_GID_BASE + os.getpid() % 20000


def own_group() -> int | None:
    """The session's own group, which every process it starts inherits and so
    every object those make; None when it runs under none (not root): then
    every object on the host counts as the session's."""
    return session_gid() if os.getegid() == session_gid() else None


SESSION_GID_BASE = 40000
_saved_gid: int | None = None


SESSION_GROUP_PREFIX = "mwperf-test-"


def _session_group() -> str:
    return f"{SESSION_GROUP_PREFIX}{os.getpid()}"


def _remove_stale_session_groups() -> None:
    """Groups a crashed session left: their pid no longer runs."""
    import grp

    for entry in grp.getgrall():
        name = entry.gr_name
        if not name.startswith(SESSION_GROUP_PREFIX):
            continue
        pid = name[len(SESSION_GROUP_PREFIX):]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            subprocess.run(["groupdel", name], capture_output=True, check=False)


def _enter_session_gid() -> None:
    """Run the session under its own group, and give that group a name:
    iceoryx names its shared-memory data segment after the process's group
    and aborts when the gid has none (RouDi's MEPOO__SEGMENT_UNABLE_TO_CREATE...),
    and a client whose user is not in that group gets no writable segment
    (POSH__RUNTIME_NO_WRITABLE_SHM_SEGMENT)."""
    global _saved_gid
    if os.geteuid() != 0 or _saved_gid is not None:
        return
    _remove_stale_session_groups()
    # the user a member too: iceoryx only writes to a segment whose group the
    # user belongs to (by /etc/group, not by the process's gid)
    import getpass

    subprocess.run(["groupadd", "-g", str(session_gid()), "-U", getpass.getuser(), _session_group()],
                   capture_output=True, check=False)
    _saved_gid = os.getgid()
    os.setgid(session_gid())


def _leave_session_gid() -> None:
    global _saved_gid
    if _saved_gid is not None:
        os.setgid(_saved_gid)
        _saved_gid = None
        subprocess.run(["groupdel", _session_group()], capture_output=True, check=False)
