"""The aarch64 build's sysroot: the arm64 builds of Debian's middleware
packages (and what they depend on), fetched with ``apt-get download`` and
unpacked with ``dpkg-deb -X`` into ``~/.cache/mwperf/sysroot-aarch64-<key>``
(one per set of packages, never changed once made: the checkouts of the
machine share it; ``$MWPERF_CACHE`` instead of ~/.cache/mwperf), never
installed into the system (scripts/install-cross-arm64.sh adds Debian's
arm64 package lists and the cross toolchain).

Also a second, glibc-only root (libc6:arm64 alone): the bundled aarch64
agent runs there under qemu-user-static (``qemu-aarch64-static -L``), so
that anything the bundle lacks is missing, not found in the sysroot.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.parse
from pathlib import Path

from mwperf.bundle.manifest import BundleError

__all__ = ["ROOT_PACKAGES", "packages", "sysroot", "glibc_root", "cache_dir", "deb_origins", "ABSENT"]

#: What the aarch64 agent builds against and runs on: the middlewares' -dev packages
#: (their libraries and CMake files), iceoryx's RouDi, and the C++ runtime the bundle carries.
ROOT_PACKAGES = ("libc6", "libstdc++6", "libgcc-s1", "cyclonedds-dev", "libfastrtps-dev", "libfastcdr-dev",
                 "libiceoryx-posh-dev", "iceoryx", "libroscpp-dev", "libstd-msgs-dev", "libssl-dev")
#: Never unpacked: the cross toolchain brings its own C library and C++ headers
#: (two copies would shadow each other), nothing here runs perl or python, and
#: ICU's headers come with boost's regex, which no adapter compiles.
_SKIP_PREFIXES = ("python3", "libpython3", "perl", "libperl", "dpkg", "tar", "install-info", "mailcap", "media-types",
                  "mime-support", "readline-common", "icu-devtools", "libicu-dev", "libc-dev-bin", "rpcsvc-proto",
                  "libc6-dev", "linux-libc-dev", "libstdc++-12-dev", "libgcc-12-dev", "libcrypt-dev", "libnsl-dev",
                  "libtirpc-dev", "libasan", "libtsan", "libhwasan", "liblsan", "libubsan")

#: Adapters the aarch64 bundle is built without, and why (`mwperf-agent list` says it; agent/CMakeLists.txt
#: MWPERF_ABSENT: no ';' in a reason, it separates them).
ABSENT = {
    "ros2": "not in the aarch64 bundle: PyPI has no aarch64 build of the ROS 2 Jazzy wheels it is built on "
            "(ros-rcl, ros-rcutils, ros-fastrtps are x86_64 only): build the agent on the board against ROS 2 Jazzy",
    "fastdds-jazzy": "not in the aarch64 bundle: the ROS 2 Jazzy wheels' Fast DDS 2.14 (ros-fastrtps) has no "
                     "aarch64 build on PyPI: build the agent on the board against ROS 2 Jazzy",
    "ros2-kilted": "not in the aarch64 bundle: PyPI has no aarch64 build of the ROS 2 Kilted wheels it is built on "
                   "(ros-kilted-rcl and ros-kilted-fastdds pull ros-rcl and ros-fastdds, x86_64 only): build the "
                   "agent on the board against ROS 2 Kilted",
    "fastdds3": "not in the aarch64 bundle: the ROS 2 Kilted wheels' Fast DDS 3.2 (ros-fastdds) has no aarch64 "
                "build on PyPI: build the agent on the board against ROS 2 Kilted",
    "cyclonedds11": "not in the aarch64 bundle: Cyclone DDS 11 is built from the cyclors crate's source for this "
                    "machine's architecture only: build the agent on the board (make setup builds it there)",
}
_RUST = ("not in the aarch64 bundle: the Rust shim is not cross-built, {why}: build the agent on the board "
         "with rustup's rustc >= {need}")
_RUST_NEED = {"zenoh": "1.75", "iceoryx2": "1.89"}


def cache_dir() -> Path:
    return Path(os.environ.get("MWPERF_CACHE") or Path.home() / ".cache" / "mwperf")


def rust_absent() -> dict[str, str]:
    """zenoh and iceoryx2: why they are left out of the aarch64 bundle."""
    try:
        sysroot = subprocess.run([shutil.which("rustc") or str(Path.home() / ".cargo/bin/rustc"), "--print", "sysroot"],
                                 capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        sysroot = ""
    if sysroot and (Path(sysroot) / "lib/rustlib/aarch64-unknown-linux-gnu").is_dir():
        why = "mwperf bundle builds it for the host only"
    else:
        why = ("rustup's aarch64-unknown-linux-gnu standard library was not reachable from the machine that "
               "built this bundle")
    return {name: _RUST.format(why=why, need=need) for name, need in _RUST_NEED.items()}


def _run(cmd: list[str], **kw) -> str:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, **kw)
    except OSError as exc:
        raise BundleError(f"{cmd[0]}: {exc.strerror} (scripts/install-cross-arm64.sh installs what the aarch64 "
                          f"bundle needs)") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise BundleError(f"{' '.join(cmd[:3])} ... failed (exit {done.returncode}): {last}")
    return done.stdout


def packages(roots: tuple[str, ...] = ROOT_PACKAGES) -> list[str]:
    """The arm64 packages to fetch: ``roots`` and what they depend on (no
    recommends), arm64 or architecture-independent, but the skipped ones."""
    out = _run(["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
                "--no-breaks", "--no-replaces", "--no-enhances", *(f"{p}:arm64" for p in roots)])
    names = {line.strip() for line in out.splitlines() if line and not line[0].isspace() and not line.startswith("<")}
    if not any(n.endswith(":arm64") for n in names):
        raise BundleError("apt knows no arm64 package: run scripts/install-cross-arm64.sh (dpkg --add-architecture "
                          "arm64, apt-get update)")
    chosen = {n for n in names if n.endswith(":arm64")}
    plain = sorted(n for n in names if ":" not in n and f"{n}:arm64" not in names)
    if plain:  # those of architecture all (the others are the host's, pulled in by a skipped package)
        shown = _run(["apt-cache", "show", "--no-all-versions", *plain])
        stanzas = [dict(line.split(": ", 1) for line in block.splitlines() if ": " in line and line[0] != " ")
                   for block in shown.split("\n\n")]
        chosen |= {s["Package"] for s in stanzas if s.get("Architecture") == "all" and "Package" in s}
    return sorted(n for n in chosen if not n.split(":")[0].startswith(_SKIP_PREFIXES))


def _fetch(names: list[str], debs: Path) -> list[Path]:
    """The packages' .deb files in ``debs``, downloaded where missing."""
    debs.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as empty:  # (apt leaves out the files already where it runs)
        uris = _run(["apt-get", "download", "--print-uris", *names], cwd=empty)
    files = [line.split()[1] for line in uris.splitlines() if line.startswith("'")]
    if len(files) != len(names):
        raise BundleError(f"apt-get download --print-uris named {len(files)} files for {len(names)} packages")
    wanted = []
    for file in files:  # NAME_VERSION_ARCH.deb
        if not (debs / file).is_file():
            package, arch = file.split("_")[0], file.rsplit("_", 1)[-1].removesuffix(".deb")
            wanted.append(f"{package}:arm64" if arch == "arm64" else package)
    if wanted:
        _run(["apt-get", "download", "-q", *wanted], cwd=debs, timeout=1800)
    return [debs / f for f in sorted(files)]


def _relink(root: Path) -> None:
    """Absolute symlinks inside ``root`` (dpkg-deb keeps them) made relative, to stay inside it."""
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            link = Path(dirpath) / name
            if link.is_symlink() and os.readlink(link).startswith("/"):
                target = root / os.readlink(link).lstrip("/")
                link.unlink()
                link.symlink_to(os.path.relpath(target, link.parent))


_USR = re.compile(r'(?<=[\s"(;])/usr(?=[/"\s;)]|$)', re.MULTILINE)


def _reroot_cmake(tree: Path, final: Path) -> None:
    """The packages' CMake files name /usr (Debian writes its prefix in): make it the sysroot's."""
    for folder in (tree / "usr/lib/aarch64-linux-gnu/cmake", tree / "usr/share"):
        for path in folder.rglob("*.cmake"):
            if path.is_symlink() or not path.is_file():
                continue
            text = path.read_text(encoding="utf-8", errors="surrogateescape")
            fixed = _USR.sub(f"{final}/usr", text)
            if fixed != text:
                path.write_text(fixed, encoding="utf-8", errors="surrogateescape")


def _unpack(debs: list[Path], name: str, log=None) -> Path:
    """``debs`` unpacked into ``cache_dir()/NAME-KEY``, KEY naming the set of files:
    made aside and renamed, never changed after (another build may be using it)."""
    stamp_text = "\n".join(sorted(d.name for d in debs)) + "\n"
    into = cache_dir() / f"{name}-{hashlib.sha256(stamp_text.encode()).hexdigest()[:12]}"
    if (into / ".mwperf-debs").is_file():
        return into
    if log is not None:
        log(f"bundle: unpacking {len(debs)} arm64 packages into {into}")
    partial = into.with_name(f"{into.name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    origins: dict[str, list[str]] = {}
    try:
        for deb in debs:  # NAME_VERSION_ARCH.deb (an epoch's colon as %3a); -X: extract, naming each file
            package, version = (urllib.parse.unquote(part) for part in deb.name.split("_")[:2])
            for line in _run(["dpkg-deb", "-X", str(deb), str(partial)]).splitlines():
                if ".so" in line:
                    origins[line.strip().lstrip(".").lstrip("/")] = [package, version]
        _relink(partial)
        _reroot_cmake(partial, into)
        (partial / ".mwperf-origins.json").write_text(json.dumps(origins, sort_keys=True))
        (partial / ".mwperf-debs").write_text(stamp_text)
        os.rename(partial, into)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    _prune(name, into)
    return into


def _prune(name: str, keep: Path) -> None:
    """Other package sets of ``name`` unused for a day (the package lists moved on)."""
    for other in cache_dir().glob(f"{name}-*"):
        stamp = other / ".mwperf-debs"
        if other != keep and ".partial-" not in other.name and stamp.is_file() and \
                time.time() - stamp.stat().st_atime > 86400:
            shutil.rmtree(other, ignore_errors=True)


@contextlib.contextmanager
def _locked():
    """One builder at a time fetches and unpacks (the caches are shared by every checkout of the machine)."""
    cache_dir().mkdir(parents=True, exist_ok=True)
    with open(cache_dir() / "arm64.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _resolved(debs_dir: Path) -> list[Path]:
    """The .deb files of :func:`packages`, fetched; apt is asked again only when its
    package lists changed (apt-get update) or a file is gone."""
    lists = sorted(glob.glob("/var/lib/apt/lists/*_Packages*"))
    key = hashlib.sha256(repr((ROOT_PACKAGES, _SKIP_PREFIXES, [(f, os.stat(f).st_mtime_ns) for f in lists]))
                         .encode()).hexdigest()
    memo = debs_dir / ".mwperf-resolved.json"
    try:
        doc = json.loads(memo.read_text())
        if doc["key"] == key and all((debs_dir / f).is_file() for f in doc["files"]):
            return [debs_dir / f for f in doc["files"]]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    debs = _fetch(packages(), debs_dir)
    memo.with_suffix(".partial").write_text(json.dumps({"key": key, "files": [d.name for d in debs]}))
    os.replace(memo.with_suffix(".partial"), memo)
    return debs


def sysroot(log=print) -> Path:
    """The arm64 sysroot, fetched and unpacked where the package set changed (cached otherwise)."""
    with _locked():
        # (CycloneDDS's CMake file takes the host's idlc when cross-compiling: no arm64 tool runs in the build)
        return _unpack(_resolved(cache_dir() / "debs-arm64"), "sysroot-aarch64", log)


def glibc_root() -> Path:
    """libc6:arm64 alone, unpacked: where the bundled agent runs under qemu."""
    with _locked():
        debs = [d for d in _resolved(cache_dir() / "debs-arm64") if d.name.startswith("libc6_")]
        return _unpack(debs, "glibc-aarch64")


def deb_origins(root: Path) -> dict[str, tuple[str, str]]:
    """Library path relative to the sysroot -> (package, version), as unpacked."""
    try:
        return {k: tuple(v) for k, v in json.loads((root / ".mwperf-origins.json").read_text()).items()}
    except (OSError, ValueError):
        return {}
