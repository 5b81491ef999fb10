"""The far side of a ``--hosts`` run, in place before its first point: each
host asked, refused or given its bundle (:mod:`mwperf.hosts.place`), what is
left there from crashed runs cleaned (:mod:`mwperf.hosts.cleanup`), and the
hosts' buffers compared with the sizes asked (:func:`buffer_warnings`).

The result is the run's :class:`~mwperf.plan.where.HostPair` with each side's
agent (the bundle's, unless ``--agent``) and what each host is (the records'
``hosts``); the point's options are checked against the description of each
bundle's agent before anything is copied.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, TextIO

from mwperf.description import AgentInfo
from mwperf.hosts.bundles import Bundle
from mwperf.hosts.cleanup import FarLeftovers, clean_far
from mwperf.hosts.place import Placed, ask, choose, install
from mwperf.plan.where import HostPair, check_host_text
from mwperf.units import format_size

__all__ = ["FarSide", "prepare", "buffer_warnings"]


@dataclass
class FarSide:
    """The run's hosts, ready."""

    pair: HostPair
    placed: dict[str, Placed]  # by ssh target

    def sides(self) -> tuple[Placed, Placed]:
        return self.placed[self.pair.pub], self.placed[self.pair.sub]

    def clean(self, shm_patterns: tuple[str, ...]) -> list[FarLeftovers]:
        """Each host's clean-up (before the first point and after the last)."""
        used = [p.bundle.hash for p in self.placed.values() if p.bundle is not None]
        return [clean_far(target, self.pair.ssh_options, placed.facts.dir, placed.agent, used, shm_patterns)
                for target, placed in self.placed.items()]

    def bundle_phase(self) -> dict:
        """The records' ``phases.bundle``: how each side's bundle got there (``cached``, ``copied N in S s``)."""
        pub, sub = self.sides()
        return {"pub": pub.phase(), "sub": sub.phase()}


def prepare(pair: HostPair, bundle_dir: Path | None, remote_dir: str | None, agent: str | None,
            check: Callable[[str, Bundle, AgentInfo], None] | None = None) -> FarSide:
    """Ask both hosts, refuse what cannot run (UsageError naming the host) before copying anything, then put
    each bundle in place; ``agent`` (--agent) wins over the bundles. ``check(target, bundle, its agent's
    description)`` may refuse a host too, before anything is copied (the run's options)."""
    check_host_text("--remote-dir", remote_dir)  # before anything runs on a host
    check_host_text("--agent", agent)
    targets = list(dict.fromkeys((pair.pub, pair.sub)))
    facts = {t: ask(t, pair.ssh_options, remote_dir) for t in targets}
    if agent is not None:
        placed = {t: Placed(facts[t], None, agent, "given") for t in targets}
    else:
        chosen = {t: choose(facts[t], bundle_dir) for t in targets}  # every refusal before the first copy
        for t, bundle in chosen.items():
            if check is not None:
                check(t, bundle, bundle.agent_info(f"{facts[t].dir}/{bundle.hash}"))
        placed = {t: install(facts[t], chosen[t], pair.ssh_options) for t in targets}
    side = FarSide(pair, placed)
    pub, sub = side.sides()
    records = ({**pub.facts.record(pair.data[0]), "bundle": pub.record()},
               {**sub.facts.record(pair.data[1]), "bundle": sub.record()})
    agents = None if agent is not None else (pub.agent, sub.agent)
    side.pair = replace(pair, agents=agents, facts=records)
    return side


def _limits(facts: dict) -> list[tuple[str, int]]:
    """(sysctl, the largest sample it lets one side hold) for the buffers that bound a sample's size."""
    out = []
    for name in ("net.core.rmem_max", "net.ipv4.ipfrag_high_thresh"):
        value = facts.get("sysctl", {}).get(name)
        if isinstance(value, int):
            out.append((name, value))
    return out


def buffer_warnings(pair: HostPair, sizes: list[int], out: TextIO) -> list[str]:
    """Warn, before measuring, when a receiving host's socket buffers or IP reassembly memory are smaller than
    the largest sample asked (a sample larger than the receive buffer the kernel allows, or than the
    fragments the kernel keeps for reassembly, can be lost whole, silently: the known cause of lost large
    samples on ROS 2 systems). With --direction both, both hosts receive."""
    if pair.facts is None or not sizes:
        return []
    largest = max(sizes)
    lines = []
    receivers = [(pair.sub, pair.facts[1]), (pair.pub, pair.facts[0])]
    for target, facts in receivers:
        for name, value in _limits(facts):
            if value < largest:
                lines.append(f"mwperf: warning: {target}: {name} = {value} ({format_size(value)}) is smaller than "
                             f"the {format_size(largest)} samples asked: a sample that does not fit can be lost whole "
                             f"(raise it: sysctl -w {name}=...)")
    for line in dict.fromkeys(lines):
        out.write(line + "\n")
    out.flush()
    return lines
