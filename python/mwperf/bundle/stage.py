"""A bundle's folder, before its description and manifest: the agent, its
plugins, RouDi when iceoryx is in it, and every library they load beyond
glibc, copied and given RUNPATHs that find each other through ``$ORIGIN``
(patchelf), nothing of the build's paths left in them.

    mwperf-agent              RUNPATH $ORIGIN/lib
    adapters/libmwperf-*.so   RUNPATH $ORIGIN/../lib
    bin/iox-roudi             RUNPATH $ORIGIN/../lib
    lib/<soname>              RUNPATH $ORIGIN
    roudi.toml
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

    def inputs(self) -> list[Path]:
        """Every file the bundle is made of (what a cached bundle must be rebuilt after)."""
        extra = [self.build / "roudi.toml"] if self.roudi else []
        return [self.agent, *self.plugins, *([self.roudi] if self.roudi else []), *extra,
                *self.closure.libraries.values()]


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
    if closure.conflicts:
        soname, (a, b) = next(iter(closure.conflicts.items()))
        raise BundleError(f"two different {soname} would share the bundle's lib/: {a} and {b}")
    return Plan(arch, build, sysroot, agent, plugins, roudi, closure)


def stage(p: Plan, into: Path) -> Staged:
    """Copy what ``p`` names into ``into``, stripped, with the bundle's RUNPATHs."""
    staged = Staged(root=into, closure=p.closure)
    _copy(p.agent, into / "mwperf-agent", True)
    staged.sources["mwperf-agent"] = p.agent
    for plugin in p.plugins:
        _copy(plugin, into / "adapters" / plugin.name, False)
        staged.sources[f"adapters/{plugin.name}"] = plugin
        staged.libraries_of[_adapter(plugin)] = sorted(f"lib/{s}" for s in p.closure.of_root[plugin])
    for soname, path in p.closure.libraries.items():
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
    for folder, runpath in _RUNPATH.items():
        files = [str(into / rel) for rel in sorted(staged.sources) if rel.split("/")[0] == folder]
        if files:
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
