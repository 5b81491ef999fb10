"""A bundle's folder, before its description and manifest: the agent, its
plugins, RouDi when iceoryx is in it, and every library they load beyond
glibc, copied and given RUNPATHs that find each other through ``$ORIGIN``
(patchelf), nothing of the build's paths left in them.

    mwperf-agent              RUNPATH $ORIGIN/lib
    adapters/libmwperf-*.so   RUNPATH $ORIGIN/../lib  ($ORIGIN/../lib/<adapter>:$ORIGIN/../lib when it has its own)
    bin/iox-roudi             RUNPATH $ORIGIN/../lib
    lib/<soname>              RUNPATH $ORIGIN
    lib/<adapter>/<soname>    RUNPATH $ORIGIN:$ORIGIN/..
    roudi.toml

Two plugins may load two different libraries of one soname (ros2 and
ros2-kilted: Fast CDR 2.2 and 2.3, both libfastcdr.so.2). Such a library, and
every library that loads one (directly or not), goes to its plugin's own
folder ``lib/<adapter>/``; the rest is shared in ``lib/``. A plugin is loaded
alone in its process (an agent runs one middleware; ``list`` describes each in a
child of its own), so the loader never meets both.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from mwperf.bundle.closure import Closure, resolve, system_dirs
from mwperf.bundle.manifest import BundleError

__all__ = ["Plan", "Staged", "DLOPENED", "plugins_of", "plan", "stage", "origins"]

#: Libraries a middleware dlopen()s by name at run time (no DT_NEEDED names
#: them): rosidl's type support of the message the ros2 adapter sends.
DLOPENED = {
    "ros2": ["libstd_msgs__rosidl_typesupport_fastrtps_c.so", "libstd_msgs__rosidl_typesupport_introspection_c.so",
             "libstd_msgs__rosidl_typesupport_fastrtps_cpp.so", "libstd_msgs__rosidl_typesupport_introspection_cpp.so"],
}
_RUNPATH = {"mwperf-agent": "$ORIGIN/lib", "adapters": "$ORIGIN/../lib", "bin": "$ORIGIN/../lib", "lib": "$ORIGIN"}


@dataclass
class Staged:
    root: Path
    closure: Closure
    #: bundle-relative path -> the file it was copied from
    sources: dict[str, Path] = field(default_factory=dict)
    #: adapter -> the bundle's libraries its plugin loads (relative paths)
    libraries_of: dict[str, list[str]] = field(default_factory=dict)


def plugins_of(build: Path) -> list[Path]:
    """The plugins the build's agent registers (build.ninja's order-only
    dependencies of mwperf-agent), not a stale one left in adapters/."""
    ninja = build / "build.ninja"
    if ninja.is_file():
        for line in ninja.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("build mwperf-agent:"):
                names = re.findall(r"adapters/libmwperf-([A-Za-z0-9_-]+)\.so", line)
                return [build / "adapters" / f"libmwperf-{n}.so" for n in sorted(set(names))]
    return sorted((build / "adapters").glob("libmwperf-*.so"))


def _tool(cmd: list[str], package: str) -> None:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True)
    except FileNotFoundError:
        raise BundleError(f"{cmd[0]} not found: install {package} (make deps-system; for aarch64 "
                          f"scripts/install-cross-arm64.sh)") from None
    if done.returncode != 0:
        raise BundleError(f"{' '.join(cmd[:3])} ...: {done.stderr.strip()[-300:] or done.returncode}")


def _copy(source: Path, to: Path, executable: bool) -> None:
    to.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, to)
    to.chmod(0o755 if executable else 0o644)


@dataclass
class Plan:
    """What goes into the bundle, before anything is copied."""
    arch: str
    build: Path
    sysroot: Path | None
    agent: Path
    plugins: list[Path]
    roudi: Path | None          # iox-roudi, when iceoryx is in it
    closure: Closure
    #: soname -> file, in lib/
    shared: dict[str, Path] = field(default_factory=dict)
    #: plugin -> soname -> file, in lib/<adapter>/
    private: dict[Path, dict[str, Path]] = field(default_factory=dict)

    def inputs(self) -> list[Path]:
        """Every file the bundle is made of (what a cached bundle must be rebuilt after)."""
        extra = [self.build / "roudi.toml"] if self.roudi else []
        own = [path for libraries in self.private.values() for path in libraries.values()]
        return [self.agent, *self.plugins, *([self.roudi] if self.roudi else []), *extra,
                *self.shared.values(), *own]


def _split(closure: Closure, roots: list[Path]) -> tuple[dict[str, Path], dict[Path, dict[str, Path]]]:
    """The libraries every root may share (lib/) and each root's own (lib/<adapter>/):
    a soname found as two different files, and whatever loads one, is its root's own."""
    differ = set(closure.conflicts)
    shared: dict[str, Path] = {}
    private: dict[Path, dict[str, Path]] = {}
    for root in roots:
        paths = closure.paths_of.get(root, {})
        own = {s for s in paths if s in differ}
        grew = bool(own)
        while grew:
            grew = False
            for soname, path in paths.items():
                if soname not in own and any(n in own for n in closure.elves[path].needed):
                    own.add(soname)
                    grew = True
        if own:
            private[root] = {s: paths[s] for s in sorted(own)}
        for soname in sorted(set(paths) - own):
            shared.setdefault(soname, paths[soname])
    return shared, private


def plan(arch: str, build: Path, sysroot: Path | None = None, roudi: Path | None = None) -> Plan:
    """The build's agent, its plugins, RouDi and every library they load (BundleError when one is missing)."""
    agent = build / "mwperf-agent"
    if not agent.is_file():
        raise BundleError(f"{agent}: not built")
    plugins = plugins_of(build)
    roots = [agent, *plugins]
    if any(p.name == "libmwperf-iceoryx.so" for p in plugins):
        if roudi is None or not roudi.is_file():
            raise BundleError(f"iceoryx is built but its daemon is not found ({roudi or 'iox-roudi'}): "
                              f"install iceoryx (make deps-system)")
        roots.append(roudi)
    else:
        roudi = None
    extra = {p: DLOPENED.get(_adapter(p), []) for p in plugins}
    dirs = system_dirs(arch, sysroot or Path("/"))
    if sysroot is not None:
        dirs.append(Path(f"/usr/{arch}-linux-gnu/lib"))  # the cross toolchain's C++ runtime, after the sysroot's
    closure = resolve(roots, dirs, arch, extra, reroot=sysroot)
    if closure.missing:
        soname, who = closure.missing[0]
        raise BundleError(f"{who.name} needs {soname}, found nowhere ({len(closure.missing)} missing in all: "
                          f"{', '.join(sorted({m[0] for m in closure.missing}))})")
    shared, private = _split(closure, roots)
    for root in private:
        if root not in plugins:
            soname = next(iter(private[root]))
            a, b = closure.conflicts.get(soname) or (private[root][soname], private[root][soname])
            raise BundleError(f"{root.name} loads {soname}, found as two different files: {a} and {b}")
    return Plan(arch, build, sysroot, agent, plugins, roudi, closure, shared, private)


def stage(p: Plan, into: Path) -> Staged:
    """Copy what ``p`` names into ``into``, stripped, with the bundle's RUNPATHs."""
    staged = Staged(root=into, closure=p.closure)
    _copy(p.agent, into / "mwperf-agent", True)
    staged.sources["mwperf-agent"] = p.agent
    for plugin in p.plugins:
        _copy(plugin, into / "adapters" / plugin.name, False)
        staged.sources[f"adapters/{plugin.name}"] = plugin
        own = p.private.get(plugin, {})
        folder = f"lib/{_adapter(plugin)}"
        staged.libraries_of[_adapter(plugin)] = sorted(f"{folder}/{s}" if s in own else f"lib/{s}"
                                                       for s in p.closure.of_root[plugin])
        for soname, path in own.items():
            _copy(path, into / folder / soname, False)
            staged.sources[f"{folder}/{soname}"] = path
    for soname, path in p.shared.items():
        _copy(path, into / "lib" / soname, False)
        staged.sources[f"lib/{soname}"] = path
    if p.roudi is not None:
        _copy(p.roudi, into / "bin" / "iox-roudi", True)
        staged.sources["bin/iox-roudi"] = p.roudi
        _copy(p.build / "roudi.toml", into / "roudi.toml", False)
    # No debug information nor symbols beyond the dynamic ones (the Rust shim's
    # are most of its plugins' size); then the RUNPATHs, a folder at a time.
    strip = "strip" if p.sysroot is None else f"{p.arch}-linux-gnu-strip"
    _tool([strip, "--strip-unneeded", *(str(into / rel) for rel in sorted(staged.sources))], "binutils' strip")
    runpaths: dict[str, list[str]] = {}
    for rel in sorted(staged.sources):
        parts = rel.split("/")
        if parts[0] == "lib" and len(parts) == 3:
            runpath = "$ORIGIN:$ORIGIN/.."
        elif parts[0] == "adapters" and any(_adapter(q) == _adapter(Path(rel)) for q in p.private):
            runpath = f"$ORIGIN/../lib/{_adapter(Path(rel))}:$ORIGIN/../lib"
        else:
            runpath = _RUNPATH[parts[0]]
        runpaths.setdefault(runpath, []).append(str(into / rel))
    for runpath, files in runpaths.items():
        _tool(["patchelf", "--set-rpath", runpath, *files], "Debian's patchelf")
    return staged


def _adapter(plugin: Path) -> str:
    return plugin.name.removeprefix("libmwperf-").removesuffix(".so")


def origins(paths: list[Path], sysroot: Path | None, deb_origins: dict) -> dict[Path, tuple[str, str]]:
    """Each library's package and version: its Debian package (dpkg's database,
    or the arm64 .deb it was unpacked from), or the wheel whose RECORD lists it."""
    out: dict[Path, tuple[str, str]] = {}
    for path in paths:
        found = _wheel_of(path)
        if found:
            out[path] = found
        elif sysroot is not None:
            try:
                rel = str(path.relative_to(sysroot))
            except ValueError:
                continue
            for key in (rel, rel.removeprefix("usr/"), f"usr/{rel}"):
                if key in deb_origins:
                    out[path] = tuple(deb_origins[key])
                    break
    rest = [p for p in paths if p not in out and sysroot is None]
    if rest:
        out.update(_dpkg_of(rest))
    return out


_RECORDS: dict[Path, dict[Path, tuple[str, str]]] = {}


def _wheel_of(path: Path) -> tuple[str, str] | None:
    for parent in path.parents:
        site = sorted(parent.glob("lib/python3*/site-packages"))
        if site:
            break
    else:
        return None
    index = _RECORDS.get(site[0])
    if index is None:
        index = _RECORDS[site[0]] = {}
        for record in site[0].glob("*.dist-info/RECORD"):
            name, _, version = record.parent.name.removesuffix(".dist-info").partition("-")
            for line in record.read_text(encoding="utf-8", errors="replace").splitlines():
                rel = line.split(",", 1)[0]
                if ".so" in rel:
                    index[(site[0] / rel).resolve()] = (name.replace("_", "-").lower(), version)
    return index.get(path.resolve())


def _dpkg_of(paths: list[Path]) -> dict[Path, tuple[str, str]]:
    asked = {}
    for p in paths:
        text = str(p)
        asked[text] = p
        if text.startswith("/usr/lib/"):
            asked[text.removeprefix("/usr")] = p  # dpkg may know it as /lib/... (merged /usr)
    done = subprocess.run(["dpkg-query", "-S", *asked], capture_output=True, text=True)
    owner: dict[Path, str] = {}
    for line in done.stdout.splitlines():
        package, _, path = line.partition(": ")
        if path in asked and "," not in package and "diversion" not in package:
            owner[asked[path]] = package.split(":")[0]
    if not owner:
        return {}
    shown = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Version}\n", *sorted(set(owner.values()))],
                           capture_output=True, text=True).stdout
    versions = dict(line.split(" ", 1) for line in shown.splitlines() if " " in line)
    return {p: (pkg, versions.get(pkg, "")) for p, pkg in owner.items()}
