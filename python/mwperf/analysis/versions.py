"""Versions as an axis: the builds of one middleware (Cyclone DDS 0.10 and 11,
Fast DDS 2.9, 2.14 and 3.2, ROS 2 Jazzy and Kilted) paired point by point,
old against new (``mwperf compare --versions``, the report's "versions" section).

Which adapters are builds of one middleware, and which is the older, comes from
the records themselves: an adapter records the libraries it runs on
(``adapter.versions``, as loaded in its process), its middleware's own first
(``cyclonedds``; ``fastdds`` then ``fastcdr``; ros2's ``rcl``). Two adapters
whose records name the same first library are builds of that middleware; their
versions of it order them.

A pair measures the same point (:func:`version_key`: the point key without the
middleware's name) with the same explicit configuration, unless a version's
defaults made it differ: :func:`config_differences` names every setting of the
adapters' configuration (``adapter.config``, the values each applied or read
back from its library) that differs between the two, so that a difference of
configuration is told from one of code.
"""

from __future__ import annotations

import re
from typing import Iterable

from mwperf.analysis.compare import point_key

__all__ = ["library", "version_order", "families", "version_key", "config_differences", "compare_versions"]

#: Settings that name the run rather than the configuration (topic names carry the run id).
_RUN_SPECIFIC = {"topic_out", "topic_in", "domain", "rmw_prefix", "rcl", "xml_file"}


def library(r: dict) -> tuple[str, str] | None:
    """The middleware's own library and its version, as the record names them first."""
    adapter = r.get("adapter") if isinstance(r.get("adapter"), dict) else {}
    versions = adapter.get("versions") if isinstance(adapter.get("versions"), dict) else {}
    for name, version in versions.items():
        return str(name), str(version)
    return None


def version_order(version: str) -> tuple[int, ...]:
    """``"2.14.5"`` -> (2, 14, 5): numbers compared as numbers."""
    return tuple(int(n) for n in re.findall(r"\d+", version))


def families(records: Iterable[dict]) -> dict[str, list[str]]:
    """``{library: [adapter, ...]}``, oldest version first, for each library two
    adapters or more of ``records`` run on (one adapter: no family)."""
    seen: dict[str, dict[str, str]] = {}
    for r in records:
        lib = library(r)
        if lib is not None and r.get("source") is None and not r.get("peer_mw"):
            seen.setdefault(lib[0], {}).setdefault(r["mw"], lib[1])
    return {lib: sorted(builds, key=lambda mw: (version_order(builds[mw]), mw))
            for lib, builds in seen.items() if len(builds) > 1}


def version_key(r: dict) -> tuple:
    """What a point is apart from its middleware's build."""
    return point_key(r)[1:]


def _config(r: dict) -> dict:
    adapter = r.get("adapter") if isinstance(r.get("adapter"), dict) else {}
    merged = {}
    for part in ("config", "sub_config"):
        if isinstance(adapter.get(part), dict):
            merged.update(adapter[part])
    return merged


def config_differences(old: dict, new: dict) -> list[str]:
    """Every setting both adapters' configurations name with different values
    (``heartbeat_period_ms 3000 vs 100``), and those only one names."""
    a, b = _config(old), _config(new)
    out = []
    for key in sorted(set(a) | set(b)):
        if key in _RUN_SPECIFIC:
            continue
        if key not in a or key not in b:
            out.append(f"{key} only in {'new' if key in b else 'old'}")
        elif a[key] != b[key]:
            out.append(f"{key} {a[key]} vs {b[key]}")
    return out


def compare_versions(names: list[str], dirs: list[str], out, *, force: bool = False, err=None, **gates) -> int:
    """``mwperf compare --versions OLD,NEW[,...] DIR [DIR2]``: each later build against the first,
    point by point: within one run directory, or the first build's points from DIR and the others' from DIR2."""
    import sys

    from mwperf.analysis.compare import Run, compare_runs, load_run
    from mwperf.errors import UsageError

    if len(names) < 2 or len(set(names)) != len(names):
        raise UsageError("compare", "--versions", "name two builds of one middleware or more, each once (old,new)")
    if len(dirs) > 2:
        raise UsageError("compare", " ".join(dirs), "--versions takes one run directory, or two (the old build's, the new's)")
    err = err or sys.stderr
    runs = []
    for i, name in enumerate(names):
        run = load_run(dirs[0] if i == 0 or len(dirs) == 1 else dirs[1], lambda m: err.write(f"mwperf: warning: {m}\n"))
        points = {("/".join(names), *key[1:]): records for key, records in run.points.items() if key[0] == name}
        if not points:
            raise UsageError("compare", name, f"no ok point of it in {run.path}")
        libs = {library(r)[0] if library(r) else None for records in points.values() for r in records}
        if runs and libs != runs[0][1]:
            raise UsageError("compare", ",".join(names), f"not builds of one middleware ({names[0]} runs on "
                             f"{', '.join(map(str, runs[0][1]))}, {name} on {', '.join(map(str, libs))})")
        runs.append((Run(run.path, points, run.build_type), libs))
    runs = [run for run, _ in runs]
    return compare_runs(dirs, out, force=force, err=err, runs=runs, extra_unlike=config_differences, **gates)
