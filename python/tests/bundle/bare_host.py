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

import re
import shlex
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from mwperf.bundle import read_manifest
from mwperf.bundle.manifest import top_name
from conftest import written

__all__ = ["glibc_files", "bare_command", "agent_wrapper", "can_unshare", "unpacked", "loaded", "lossless_points",
           "LIBDIR", "HIDE"]

LIBDIR = Path("/usr/lib/x86_64-linux-gnu")
CHECKOUT = Path(__file__).resolve().parents[3]
#: What the far host has not: the checkout's build and wheels.
HIDE = [CHECKOUT / "agent" / "build", CHECKOUT / ".deps"]


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


def agent_wrapper(agent: list[str], at: Path, scratch: Path, hide: list[Path]) -> Path:
    """An executable at ``at`` that runs ``agent`` (an argv: the bundled agent,
    or qemu running it) with its arguments on a glibc-only host (each call a
    namespace of its own, its tmpfs on ``scratch``/PID)."""
    at.write_text(f"""#!/bin/sh
export BARE_SCRATCH={shlex.quote(str(scratch))}/$$
exec {" ".join(shlex.quote(a) for a in _unshare(hide) + agent)} "$@"
""")
    at.chmod(0o755)
    return at


def unpacked(archive: Path, into: Path) -> Path:
    """The bundle archive unpacked into ``into``: its folder."""
    manifest = read_manifest(archive)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="tar")
    return into / top_name(manifest.arch, manifest.hash)


def loaded(logs: Path, marker: str) -> set[str]:
    """The objects whose initialisers ran (LD_DEBUG=libs, LD_DEBUG_OUTPUT=``logs``/ld) in the
    processes whose log mentions ``marker`` (the namespace's own mount and cp are the machine's)."""
    found: set[str] = set()
    for log in logs.glob("ld.*"):
        text = log.read_text(errors="replace")
        if marker in text:
            found |= set(re.findall(r"calling init: (\S+)", text))
    return found


def lossless_points(agent: list[str], tmp_path: Path, mws: tuple[str, ...] = ("udp", "cyclonedds")) -> None:
    """A short latency point of each of ``mws`` on loopback, both agents ``agent``
    on a glibc-only host: each ok, every sample sent received, none lost."""
    wrapper = agent_wrapper(agent, tmp_path / "far-agent", tmp_path / "scratch", HIDE)
    out = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "mwperf", "run", "--agent", str(wrapper), "--mw", ",".join(mws),
                           "--mode", "latency", "--size", "64", "--duration", "1s", "--warmup", "200ms", "--no-floor",
                           "--out", str(out), "--db", "none"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    records = written(out)
    assert sorted(r["mw"] for r in records) == sorted(mws)
    for r in records:
        assert r["status"] == "ok" and r["sent"] > 0 and r["received"] == r["sent"] and r["lost"] == 0, r["mw"]
