"""Ansible as mwperf runs it: ``ansible-inventory`` and ``ansible-playbook`` of
the controller's environment (``ansible-core``, the extra ``lab``), each run
in a directory of its own (``mwperf-ansible-PID-*`` in the temporary
directory) that holds Ansible's local temporary files and ssh control
sockets: the masters are ended and the directory removed afterwards, so an
Ansible run leaves nothing on this machine (nor on the hosts: the playbook's
tasks on them are ``raw``, see :mod:`mwperf.lab`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from mwperf.errors import UsageError
from mwperf.execute.ssh import remove_stale_dirs
from mwperf.extras import need

__all__ = ["tool", "Workspace"]

_PREFIX = "mwperf-ansible-"


def tool(name: str, option: str, value: str | None) -> str:
    """The path of Ansible's ``name`` (``ansible-playbook``): beside this Python's (the venv's), else on PATH;
    UsageError naming ``option`` when ansible-core is not installed."""
    need("ansible", option, value)
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which(name)
    if found is None:
        raise UsageError(option, value, f"{name} is not on PATH although ansible-core is installed "
                                        f"(pip install -e 'python[lab]' puts it beside mwperf)")
    return found


class Workspace:
    """A directory for one Ansible run and the environment that keeps Ansible's files in it."""

    def __init__(self) -> None:
        remove_stale_dirs(Path(tempfile.gettempdir()), _PREFIX)  # of controllers no longer running
        self.dir = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-"))
        (self.dir / "cp").mkdir()
        (self.dir / "tmp").mkdir()

    def env(self, **extra: str) -> dict[str, str]:
        return dict(os.environ, ANSIBLE_LOCAL_TEMP=str(self.dir / "tmp"),
                    ANSIBLE_SSH_CONTROL_PATH_DIR=str(self.dir / "cp"), ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0",
                    ANSIBLE_RETRY_FILES_ENABLED="0", ANSIBLE_DEPRECATION_WARNINGS="0",
                    ANSIBLE_SYSTEM_WARNINGS="0", ANSIBLE_LOCALHOST_WARNING="0", **extra)

    def close(self) -> None:
        """End the ssh masters Ansible left (ControlPersist), then remove the directory."""
        for sock in (self.dir / "cp").iterdir() if (self.dir / "cp").is_dir() else ():
            try:
                subprocess.run(["ssh", "-o", f"ControlPath={sock}", "-O", "exit", "mwperf-lab"],
                               stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
            except (OSError, subprocess.SubprocessError):
                pass  # it ends by itself (Ansible's ControlPersist)
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> "Workspace":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
