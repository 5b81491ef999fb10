"""``mwperf bundle --arch ARCH``: the agent of this checkout, built for ARCH
(this machine's: the checkout's agent/build; aarch64 on x86-64: cross-built
in agent/build/aarch64 against the sysroot of :mod:`mwperf.bundle.cross`),
staged with every library it loads beyond glibc (:mod:`mwperf.bundle.stage`),
described by its own ``mwperf-agent list`` (run under qemu-user-static for
aarch64, where only glibc is there besides the bundle), hashed, and written
as one archive (:mod:`mwperf.bundle.manifest`; BUNDLE-CONTRACT.md).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import mwperf.bundle.cross as cross
from mwperf.bundle.elf import is_elf, read_elf
from mwperf.bundle.manifest import (DESCRIPTION, FORMAT, MANIFEST, BundleError, Manifest, archive_name, content_hash,
                                    description_text, dumps, top_name, write_archive)
from mwperf.bundle.stage import Plan, Staged, origins, plan, stage

__all__ = ["build", "prepare", "assemble", "ARCHES", "CHECKOUT", "host_arch", "default_out", "agent_version"]

ARCHES = ("x86_64", "aarch64")
CHECKOUT = Path(__file__).resolve().parents[3]
TOOLCHAIN = "agent/toolchains/aarch64.cmake"  # (relative to the checkout)


def host_arch() -> str:
    machine = platform.machine()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(machine.lower(), machine)


def default_out() -> Path:
    return CHECKOUT / "bundles"


def agent_version() -> str | None:
    """The version agent/CMakeLists.txt gives the agent (None outside a checkout)."""
    try:
        text = (CHECKOUT / "agent" / "CMakeLists.txt").read_text(encoding="utf-8")
    except OSError:
        return None
    start = text.find("project(mwperf_agent VERSION ")
    return text[start:].split()[2] if start >= 0 else None


def _run(cmd: list[str], what: str, **kw) -> None:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, **kw)
    except OSError as exc:
        raise BundleError(f"{what}: {cmd[0]}: {exc.strerror}") from None
    if done.returncode != 0:
        tail = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()][-12:]
        raise BundleError(f"{what} failed (exit {done.returncode}): " + " | ".join(tail))


def _cmake(build: Path, configure: list[str], log) -> Path:
    """``build`` configured (with ``configure``, if any) and the agent built there."""
    agent = CHECKOUT / "agent"
    stamp = build / ".mwperf-configure"
    said = "\n".join(configure + [(CHECKOUT / TOOLCHAIN).read_text()]) if configure else ""
    if configure and (build / "CMakeCache.txt").is_file() and (not stamp.is_file() or stamp.read_text() != said):
        shutil.rmtree(build)  # another toolchain or sysroot: CMake would keep the first one
    if not (build / "build.ninja").is_file() or (configure and not stamp.is_file()):
        log(f"bundle: cmake -S agent -B {os.path.relpath(build, CHECKOUT)}")
        _run(["cmake", "-S", str(agent), "-B", str(build), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release", *configure],
             "configuring the agent")
        if configure:
            stamp.write_text(said)
    _run(["cmake", "--build", str(build), "--target", "mwperf-agent"], "building the agent")
    return build


def _cross_configure(sysroot: Path) -> list[str]:
    absent = {**cross.ABSENT, **cross.rust_absent()}
    return [f"-DCMAKE_TOOLCHAIN_FILE={CHECKOUT / TOOLCHAIN}",
            f"-DMWPERF_SYSROOT={sysroot}", f"-DMWPERF_FIND_ROOTS={CHECKOUT / '.deps' / 'connext'}",
            "-DMWPERF_BUILD_TESTS=OFF",
            *(f"-DMWPERF_ADAPTER_{name.upper().replace('-', '_')}=OFF" for name in sorted(absent)),
            "-DMWPERF_ABSENT=" + ";".join(f"{name}: {why}" for name, why in sorted(absent.items()))]


def _describe(root: Path, runner: list[str]) -> list[str]:
    """The staged agent's ``list``, its own folder written relative (``roudi.toml``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LD_")}
    try:
        done = subprocess.run([*runner, str(root / "mwperf-agent"), "list"], capture_output=True, text=True,
                              env=env, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BundleError(f"the bundled agent's list did not run: {exc}") from None
    if done.returncode != 0:
        raise BundleError(f"the bundled agent's list failed (exit {done.returncode}): {done.stderr.strip()[-400:]}")
    prefix = json.dumps(f"{root}/")[:-1]  # '"<root>/' as the JSON strings hold it
    lines = [line.replace(prefix, '"') for line in done.stdout.splitlines() if line.strip()]
    for line in lines:
        json.loads(line)
    return lines


def _check(staged: Staged, events: list[dict]) -> None:
    """Every plugin staged is one the bundled agent loads: else the bundle lacks something."""
    head = next((e for e in events if e.get("event") == "agent"), {})
    listed = {e.get("name") for e in events if e.get("event") == "adapter"}
    missing = {m.get("name"): m.get("reason") for m in head.get("missing") or []}
    for adapter in staged.libraries_of:
        if adapter not in listed:
            raise BundleError(f"the bundled agent cannot load its {adapter} plugin: {missing.get(adapter, '?')}")


def _adapters(staged: Staged, events: list[dict], sysroot: Path | None) -> dict:
    paths = sorted({staged.sources[rel] for rels in staged.libraries_of.values() for rel in rels})
    known = origins(paths, sysroot, cross.deb_origins(sysroot) if sysroot else {})
    out: dict[str, dict] = {}
    for e in events:
        if e.get("event") == "adapter":
            name = e["name"]
            versions = {}
            for rel in staged.libraries_of.get(name, []):
                package = known.get(staged.sources[rel])
                if package:
                    versions[package[0]] = package[1]
            out[name] = {"built": True, "version": e.get("version"), "versions": dict(sorted(versions.items()))}
        elif e.get("event") == "agent":
            for m in e.get("missing") or []:
                out[str(m.get("name"))] = {"built": False, "reason": str(m.get("reason"))}
    return dict(sorted(out.items()))


def _glibc(root: Path, files: list[str]) -> tuple[str, tuple[str, ...]]:
    """The oldest glibc every ELF file of the bundle runs on, and the files that need that one."""
    need: dict[str, tuple[int, ...]] = {}
    for rel in files:
        if is_elf(root / rel):
            need[rel] = read_elf(root / rel).glibc
    top = max(need.values(), default=(0,))
    return ".".join(map(str, top)), tuple(rel for rel in files if need.get(rel) == top)


def _built_on() -> str:
    try:
        fields = dict(line.split("=", 1) for line in Path("/etc/os-release").read_text().splitlines() if "=" in line)
    except OSError:
        return platform.system()
    name = fields.get("NAME", "Linux").strip('"').split()[0]
    return f"{name} {fields.get('VERSION_ID', '').strip(chr(34))}".strip()


def prepare(arch: str, log) -> tuple[Plan, list[str]]:
    """The agent built for ``arch``, what goes into its bundle, and how to run it here (qemu for aarch64)."""
    host = host_arch()
    started = time.monotonic()
    if arch == host:
        build_dir = _cmake(CHECKOUT / "agent" / "build", [], log)
        roudi = shutil.which("iox-roudi")
        runner: list[str] = []
        sysroot = None
    elif arch == "aarch64" and host == "x86_64":
        qemu = shutil.which("qemu-aarch64-static")
        if qemu is None:
            raise BundleError("qemu-aarch64-static not found: the aarch64 agent's list runs under it "
                              "(scripts/install-cross-arm64.sh installs qemu-user-static)")
        sysroot = cross.sysroot(log)
        log(f"bundle: arm64 sysroot ready ({time.monotonic() - started:.1f} s)")
        build_dir = _cmake(CHECKOUT / "agent" / "build" / "aarch64", _cross_configure(sysroot), log)
        roudi = str(sysroot / "usr/bin/iox-roudi")
        runner = [qemu, "-L", str(cross.glibc_root())]
    else:
        raise BundleError(f"--arch {arch}: cannot be built on this {host} machine")
    log(f"bundle: {arch} agent built ({time.monotonic() - started:.1f} s)")
    return plan(arch, build_dir, sysroot, Path(roudi) if roudi else None), runner


def assemble(p: Plan, runner: list[str], root: Path) -> Manifest:
    """The bundle's folder at ``root`` (manifest.json last); its manifest."""
    staged = stage(p, root)
    lines = _describe(root, runner)
    events = [json.loads(line) for line in lines]
    _check(staged, events)
    (root / DESCRIPTION).write_bytes(description_text(lines))
    digest, files = content_hash(root)
    glibc_min, glibc_by = _glibc(root, sorted(files))
    head = next(e for e in events if e.get("event") == "agent")
    manifest = Manifest(format=FORMAT, arch=p.arch, hash=digest, agent_version=str(head.get("version")),
                        glibc_min=glibc_min, glibc_min_by=glibc_by, built_on=_built_on(),
                        adapters=_adapters(staged, events, p.sysroot), files=files)
    (root / MANIFEST).write_bytes(dumps(manifest.as_json()))
    return manifest


_CACHE = ".mwperf-bundle-inputs.json"


def _inputs_key(p: Plan) -> str:
    """What the bundle is made of, by path, size and time, with this code and the
    kernel (the raw sockets' version in its description): equal keys, equal bundles."""
    h = hashlib.sha256(f"{FORMAT} {p.arch} {platform.release()}\n".encode())
    for source in sorted(Path(__file__).parent.glob("*.py")):
        h.update(source.read_bytes())
    for path in p.inputs():
        st = path.stat()
        h.update(f"{path} {st.st_size} {st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def _cached(out: Path, arch: str, key: str) -> Path | None:
    try:
        name = json.loads((out / _CACHE).read_text()).get(arch, {}).get(key)
    except (OSError, ValueError, AttributeError):
        return None
    return out / name if isinstance(name, str) and "/" not in name and (out / name).is_file() else None


def _remember(out: Path, arch: str, key: str, archive: Path) -> None:
    try:
        doc = json.loads((out / _CACHE).read_text())
    except (OSError, ValueError):
        doc = {}
    doc = doc if isinstance(doc, dict) else {}
    doc[arch] = {key: archive.name}
    partial = out / f"{_CACHE}.{os.getpid()}"
    try:
        partial.write_text(json.dumps(doc, indent=1, sort_keys=True))
        os.replace(partial, out / _CACHE)
    finally:
        partial.unlink(missing_ok=True)


def build(arch: str, out_dir: Path | str | None = None, log=print, cache: bool = True) -> Path:
    """Build the bundle for ``arch`` into ``out_dir`` (default: bundles/ in the
    checkout); the archive's path. Nothing is redone when the same inputs made
    an archive there before (``cache=False``: always). BundleError (one line)."""
    if arch not in ARCHES:
        raise BundleError(f"--arch {arch}: one of {', '.join(ARCHES)}")
    out = Path(out_dir) if out_dir else default_out()
    try:
        out.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=out).close()
    except OSError as exc:
        raise BundleError(f"--out {out}: cannot write there ({exc.strerror})") from None
    started = time.monotonic()
    p, runner = prepare(arch, log)
    key = _inputs_key(p)
    path = _cached(out, arch, key) if cache else None
    if path is None:
        try:  # a full disk: one line, and the stage, the partial archive and cache file gone with it
            with tempfile.TemporaryDirectory(dir=out, prefix=".stage-") as tmp:
                root = Path(tmp) / "bundle"
                manifest = assemble(p, runner, root)
                path = out / archive_name(manifest.agent_version, arch, manifest.hash)
                write_archive(root, top_name(arch, manifest.hash), path)
            _remember(out, arch, key, path)
        except OSError as exc:
            raise BundleError(f"--out {out}: cannot write there ({exc.strerror or exc}); nothing of this bundle "
                              f"is left there") from None
    else:
        log("bundle: its inputs are unchanged since it was built")
    log(f"bundle: {path} ({path.stat().st_size / 1e6:.1f} MB, {time.monotonic() - started:.1f} s)")
    return path
