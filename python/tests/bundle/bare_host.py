"""A host with nothing but glibc, for a command of this machine: a mount
namespace of its own (``unshare -m``, private: nothing of it is seen
outside, and it ends with the command) in which the machine's library
folder holds only glibc's files (a tmpfs with a copy of them, bound over
/usr/lib/<triplet>) and the given folders are empty (the checkout's build,
the wheels' prefixes). The Debian middleware libraries, libstdc++ and
OpenSSL are not there: only a self-contained bundle runs in it.

:func:`bare_command` wraps an argv; :func:`agent_wrapper` writes an
executable that runs the bundled agent there (``mwperf run --agent``).
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

__all__ = ["glibc_files", "bare_command", "agent_wrapper", "can_unshare", "LIBDIR"]

LIBDIR = Path("/usr/lib/x86_64-linux-gnu")


def glibc_files() -> list[str]:
    """The files libc6 puts in the library folder (dpkg's list: the ground truth of what glibc is)."""
    out = subprocess.run(["dpkg", "-L", "libc6"], capture_output=True, text=True, check=True).stdout
    names = []
    for line in out.splitlines():
        path = Path(line)
        if path.parent in (Path("/lib/x86_64-linux-gnu"), LIBDIR) and (LIBDIR / path.name).exists():
            names.append(path.name)
    return sorted(set(names))


def can_unshare() -> str | None:
    """None when this process can make the namespace, else why not."""
    if shutil.which("unshare") is None:
        return "unshare (util-linux) not installed"
    done = subprocess.run(["unshare", "-m", "--propagation", "private", "true"], capture_output=True, text=True)
    return None if done.returncode == 0 else f"unshare -m: {done.stderr.strip() or done.returncode} (needs root)"


def _script(hide: list[Path]) -> str:
    """The shell that makes the glibc-only host in $BARE_SCRATCH (an empty folder), then runs "$@"."""
    copies = " ".join(shlex.quote(str(LIBDIR / name)) for name in glibc_files())
    empties = "\n".join(f"[ -d {shlex.quote(str(d))} ] && mount --bind \"$s/empty\" {shlex.quote(str(d))}"
                         for d in hide)
    return f"""set -e
s="$BARE_SCRATCH"
mkdir -p "$s"
mount -t tmpfs -o size=64m mwperf-bare "$s"
mkdir "$s/lib" "$s/empty"
cp -a {copies} "$s/lib/"
{empties}
mount --bind "$s/lib" {LIBDIR}
exec "$@"
"""


def _unshare(hide: list[Path]) -> list[str]:
    return ["unshare", "-m", "--propagation", "private", "/bin/sh", "-c",
            _script([Path(d).resolve() for d in hide]), "bare-host"]


def bare_command(argv: list[str], scratch: Path, hide: list[Path]) -> list[str]:
    """``argv`` run on a glibc-only host (``scratch``: an empty folder for its tmpfs)."""
    return ["env", f"BARE_SCRATCH={scratch}", *_unshare(hide), *argv]


def agent_wrapper(agent: Path, at: Path, scratch: Path, hide: list[Path], env: dict[str, str] | None = None) -> Path:
    """An executable at ``at`` that runs ``agent`` with its arguments on a glibc-only host
    (each call a namespace of its own, its tmpfs on ``scratch``/PID)."""
    setenv = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in (env or {}).items())
    at.write_text(f"""#!/bin/sh
{setenv}export BARE_SCRATCH={shlex.quote(str(scratch))}/$$
exec {" ".join(shlex.quote(a) for a in _unshare(hide))} {shlex.quote(str(agent))} "$@"
""")
    at.chmod(0o755)
    return at
