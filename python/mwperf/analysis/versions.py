"""Versions as an axis: the builds of one middleware (Cyclone DDS 0.10 and 11,
Fast DDS 2.9, 2.14 and 3.2, ROS 2 Jazzy and Kilted) paired point by point, old
against new (``mwperf compare --versions``, the report's "versions" section).

Which adapters are builds of one middleware, and which is the older, comes from
the records themselves: an adapter records the libraries it runs on, as loaded
in its process (``adapter.versions``), its middleware's own first
(``cyclonedds``; ``fastdds`` then ``fastcdr``; ros2's ``rcl``). Adapters whose
records name the same first library are builds of that middleware; their
versions of it order them.

A pair measures one point (its :class:`~mwperf.model.labels.PointId` but the
middleware's name) under the same explicit configuration, unless a version's
defaults made it differ: :func:`config_differences` names every setting of the
two adapters' configurations (``adapter.config``: what each applied, and what it
read back from its library) that differs, so that a difference of configuration
is told from one of code.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from mwperf.model.record import Record

__all__ = ["library", "version_order", "families", "config_differences"]

#: Settings that name the run or the build rather than the configuration (topic
#: names carry the run id; the rcl version and prefix are the build's).
_RUN_SPECIFIC = frozenset({"topic_out", "topic_in", "domain", "rmw_prefix", "rcl"})


def library(r: Record) -> tuple[str, str] | None:
    """The middleware's own library and its version, as the record names them first."""
    for name, version in (r.adapter.versions or {}).items():
        return name, version
    return None


def version_order(version: str) -> tuple[int, ...]:
    """``"2.14.5"`` -> (2, 14, 5): numbers compared as numbers."""
    return tuple(int(n) for n in re.findall(r"\d+", version))


def families(records: Iterable[Record]) -> dict[str, list[str]]:
    """``{library: [adapter, ...]}``, the oldest version first, for each library
    that two adapters or more of ``records`` run on (a cross-vendor point is not a build's)."""
    seen: dict[str, dict[str, str]] = {}
    for r in records:
        lib = library(r)
        if lib is not None and not r.imported and not r.peer_mw:
            seen.setdefault(lib[0], {}).setdefault(r.mw, lib[1])
    return {lib: sorted(builds, key=lambda mw: (version_order(builds[mw]), mw))
            for lib, builds in seen.items() if len(builds) > 1}


def _config(r: Record) -> dict[str, Any]:
    return {**(r.adapter.config or {}), **(r.adapter.sub_config or {})}


def config_differences(old: Record, new: Record) -> list[str]:
    """Every setting the two adapters' configurations give different values
    (``heartbeat_period_ms 3000 vs 100``), and those only one of them names."""
    a, b = _config(old), _config(new)
    out = []
    for key in sorted((set(a) | set(b)) - _RUN_SPECIFIC):
        if key not in a or key not in b:
            out.append(f"{key} only in {'new' if key in b else 'old'}")
        elif a[key] != b[key]:
            out.append(f"{key} {a[key]} vs {b[key]}")
    return out
