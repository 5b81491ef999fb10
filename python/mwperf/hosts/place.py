"""``--hosts`` puts the far side in place: before the first point, each host
is asked what it is (:mod:`mwperf.hosts.probe`, one ssh session), refused when
no bundle can run there, and given the bundle of its architecture when it
lacks it; the point's agents then run that bundle's agent.

The cache on a far host is ``~/.cache/mwperf/bundles/<hash>/`` of the ssh user
(``--remote-dir DIR``: ``DIR/<hash>/``), written nowhere else. A bundle is
installed atomically (BUNDLE-CONTRACT.md): the archive goes, over the run's
shared ssh connection, into ``DIR/.partial-<hash>-XXXXXX/``, is unpacked
there, every file's sha256 checked against the manifest, and the directory
renamed to ``DIR/<hash>`` (``mv -T``: rename(2)); when that exists already,
another controller won the race and ours is removed. A directory there whose
manifest.json is the bundle's is a cache hit: nothing is copied.

Refusals, before anything is measured (one line naming the host, exit 2): a
host ssh cannot reach, an architecture no bundle is made for or none was
built for, a glibc older than the bundle's, a cache directory that cannot be
written (a read-only home), too little room for the archive and its unpacked
files. ``--agent PATH`` still wins: that path runs on both hosts, nothing is
copied (the hosts are still asked what they are, for the records).
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from mwperf.errors import UsageError
from mwperf.execute.ssh import ssh_argv
from mwperf.hosts import bundles
from mwperf.hosts.bundles import Bundle, glibc_tuple
from mwperf.hosts.probe import SCRIPT, HostFacts, parse

__all__ = ["Placed", "ask", "choose", "install", "install_command", "INSTALL", "PROBE_TIMEOUT_S", "INSTALL_TIMEOUT_S"]

PROBE_TIMEOUT_S = 60.0
INSTALL_TIMEOUT_S = 900.0

#: $1 dir, $2 hash, $3 top directory, $4 how many files besides manifest.json, $5 `sha256sum -c` lines,
#: $6 manifest.json's sha256; the archive on stdin. Prints `installed` or `raced`.
INSTALL = r"""set -e
d=$1; h=$2; top=$3; n=$4; sums=$5; msum=$6
mkdir -p "$d"
t=$(mktemp -d "$d/.partial-$h-XXXXXX")
trap 'rm -rf "$t"' EXIT
cd "$t"
tar -xzf - --no-same-owner
cd "$top"
found=$(find . ! -type d ! -name manifest.json | wc -l)
if [ "$found" -ne "$n" ]; then echo "the unpacked bundle has $found files, its manifest $n" >&2; exit 3; fi
if ! printf '%s\n' "$sums" | sha256sum -c --quiet --strict - >&2; then exit 3; fi
cd "$d"
if [ -e "$h" ] && [ "$(sha256sum "$h/manifest.json" 2>/dev/null | cut -d' ' -f1)" != "$msum" ]; then
  mv -T "$h" "$t/stale"  # a broken copy (not what its name says): replaced
fi
touch "$t/$top"
if mv -T "$t/$top" "$h" 2>/dev/null; then echo installed
elif [ "$(sha256sum "$h/manifest.json" 2>/dev/null | cut -d' ' -f1)" = "$msum" ]; then echo raced
else echo "cannot move the bundle into $d/$h" >&2; exit 4; fi
"""


@dataclass
class Placed:
    """One host, ready: what it is, the bundle it runs (None: --agent) and how it got there."""

    facts: HostFacts
    bundle: Bundle | None
    agent: str
    state: str  # cached | copied | raced (another controller installed it meanwhile) | given (--agent)
    bytes: int = 0
    seconds: float = 0.0

    def record(self) -> dict:
        return {"arch": self.bundle.arch if self.bundle else None, "hash": self.bundle.hash if self.bundle else None,
                "state": self.state, "bytes": self.bytes, "seconds": round(self.seconds, 3), "phase": self.phase(),
                "agent": self.agent}

    def phase(self) -> str:
        if self.state == "copied":
            return f"copied {self.bytes} in {self.seconds:.2f} s"
        return self.state


def _refuse(target: str, reason: str) -> UsageError:
    return UsageError("--hosts", target, reason)


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def ask(target: str, options: tuple[str, ...], remote_dir: str | None) -> HostFacts:
    """What the host is (one ssh session); UsageError naming the host when it cannot be asked."""
    argv = ssh_argv(target, options, ["sh", "-c", SCRIPT, "mwperf-probe", remote_dir or ""])
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise _refuse(target, f"no answer within {PROBE_TIMEOUT_S:.0f} s") from None
    except OSError as exc:
        raise _refuse(target, f"cannot run ssh: {exc.strerror or exc}") from None
    if done.returncode == 255:
        raise _refuse(target, f"ssh: {_last_line(done.stderr) or 'exit 255'}")
    try:
        return parse(target, done.stdout)
    except ValueError as exc:
        raise _refuse(target, f"{exc}: {_last_line(done.stderr)}".rstrip(": ")) from None


def choose(facts: HostFacts, bundle_dir: Path | None,
           read: Callable[[Path], Bundle] = bundles.read) -> Bundle:
    """The bundle for that host, or UsageError saying why none can run there."""
    target = facts.target
    if facts.arch not in bundles.ARCHES:
        raise _refuse(target, f"architecture {facts.arch}: mwperf makes no bundle for it "
                              f"(bundles are made for {' and '.join(bundles.ARCHES)}; build the agent there "
                              f"and give --agent PATH)")
    path = bundles.find(facts.arch, bundle_dir)
    if path is None:
        from mwperf.bundle.build import default_out

        raise _refuse(target, f"no {facts.arch} bundle for this controller in {bundle_dir or default_out()} "
                              f"(make one: mwperf bundle --arch {facts.arch})")
    try:
        bundle = read(path)
    except ValueError as exc:
        raise _refuse(target, str(exc)) from None
    if facts.glibc is None:
        raise _refuse(target, f"the host does not say its glibc version (musl?); the {facts.arch} bundle needs "
                              f"glibc {bundle.glibc_min} or newer")
    if glibc_tuple(facts.glibc) < glibc_tuple(bundle.glibc_min):
        raise _refuse(target, f"glibc {facts.glibc} is older than the {bundle.glibc_min} the {facts.arch} bundle "
                              f"needs")
    cached = facts.installed.get(bundle.hash) == bundle.manifest_sha256
    if not facts.writable:
        raise _refuse(target, f"{facts.dir} cannot be written ({facts.write_error or 'read-only'}): give "
                              f"--remote-dir DIR on a writable file system")
    need_kb = (bundle.size + bundle.unpacked_bytes) // 1024 + 1
    if not cached and facts.free_kb is not None and facts.free_kb < need_kb:
        raise _refuse(target, f"disk full: {facts.free_kb} KiB free on {facts.free_on or facts.dir}, the "
                              f"{facts.arch} bundle needs {need_kb} KiB (archive and unpacked files); give "
                              f"--remote-dir DIR elsewhere")
    return bundle


def install_command(directory: str, bundle: Bundle) -> list[str]:
    """The command that installs ``bundle`` in ``directory`` on a host, the archive on its stdin."""
    sums = "\n".join(f"{digest}  ./{path}" for path, digest in sorted(bundle.files.items()))
    return ["sh", "-c", INSTALL, "mwperf-install", directory, bundle.hash, bundle.top, str(len(bundle.files)), sums,
            bundle.manifest_sha256]


def install(facts: HostFacts, bundle: Bundle, options: tuple[str, ...]) -> Placed:
    """The bundle in place on that host: found there (cached) or copied; UsageError naming the host on failure."""
    agent = f"{facts.dir}/{bundle.hash}/mwperf-agent"
    if facts.installed.get(bundle.hash) == bundle.manifest_sha256:
        return Placed(facts, bundle, agent, "cached")
    argv = ssh_argv(facts.target, options, install_command(facts.dir, bundle))
    started = time.monotonic()
    try:
        with open(bundle.path, "rb") as archive:
            done = subprocess.run(argv, stdin=archive, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise _refuse(facts.target, f"copying the bundle took over {INSTALL_TIMEOUT_S:.0f} s") from None
    seconds = time.monotonic() - started
    said = done.stdout.strip()
    if done.returncode != 0 or said not in ("installed", "raced"):
        reason = _last_line(done.stderr) or f"exit {done.returncode}"
        raise _refuse(facts.target, f"installing {bundle.path.name} in {facts.dir} failed: {reason}")
    facts.installed[bundle.hash] = bundle.manifest_sha256
    return Placed(facts, bundle, agent, "copied" if said == "installed" else "raced", bundle.size, seconds)
