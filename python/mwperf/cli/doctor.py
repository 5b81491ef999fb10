"""``mwperf doctor``: is the agent usable here, and what will skew the numbers?

Prints the agent and its adapters, the measured thread wake-up cost on the
same core vs across cores, and one line of advice per relevant system
setting. Reads only; never changes a setting. Exit 0 when the agent works.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TextIO

from mwperf.cli.common import described_agent
from mwperf.errors import AgentError
from mwperf.execute.agent import agent_version, default_agent_path, describe, find_agent, wakeup
from mwperf.execute.provenance import HALTPOLL, governor, read_sysctl

__all__ = ["add_parser", "command", "doctor", "cleanup", "advice_busy_read", "advice_busy_poll", "advice_rmem_max",
           "advice_governor", "wakeup_advice", "RMEM_WANTED"]

RMEM_WANTED = 8 * 1024 * 1024
#: cross-core p50 at least this many times the same-core one is "much slower"
WAKEUP_RATIO = 2.0


def add_parser(sub: argparse._SubParsersAction) -> None:
    doctor = sub.add_parser("doctor", help="check the agent and the system settings that skew numbers")
    doctor.add_argument("--agent", metavar="PATH", help="mwperf-agent binary")
    doctor.add_argument("--cleanup", action="store_true",
                        help="only remove what crashed runs left: their network namespaces and shared-memory segments")
    doctor.set_defaults(func=command)


def command(ns: argparse.Namespace, argv: list[str]) -> int:
    if ns.cleanup:
        return cleanup(sys.stdout, ns.agent)
    return doctor(sys.stdout, ns.agent)


def advice_busy_read(value) -> str:
    if value is None:
        return "not readable here"
    if value == 0:
        return ("latency at low rates includes interrupt wake-up; sysctl -w net.core.busy_read=50 "
                "trades a core for lower latency (see reference sweep)")
    return f"busy polling on reads ({value} us): lower latency, a core spins while waiting; report it with results"


def advice_busy_poll(value) -> str:
    if value is None:
        return "not readable here"
    if value == 0:
        return ("poll()/epoll waits sleep until the interrupt; sysctl -w net.core.busy_poll=50 lowers "
                "latency of middlewares that wait in poll (costs CPU)")
    return f"busy polling in poll/epoll ({value} us): report it with results"


def advice_rmem_max(value) -> str:
    if not isinstance(value, int):
        return "not readable here"
    if value < RMEM_WANTED:
        return (f"large UDP/DDS messages may be dropped; sysctl -w net.core.rmem_max={RMEM_WANTED} "
                f"(and net.core.wmem_max={RMEM_WANTED})")
    return "ok: large socket buffers are allowed"


def advice_governor(value: str | None) -> str:
    if value is None:
        return "not exposed: VM: frequency managed by the host"
    if value != "performance":
        return ("frequency scaling adds latency and run-to-run variance; "
                "cpupower frequency-set -g performance for measurements")
    return "ok"


def _p50_ns(event: dict) -> float | None:
    for key in ("wakeup_p50_ns", "p50_ns"):
        if isinstance(event.get(key), (int, float)):
            return float(event[key])
    rtt = event.get("rtt_ns")
    if isinstance(rtt, dict) and rtt.get("p50") is not None:
        return rtt["p50"] / 2
    return None


def _p99_ns(event: dict) -> float | None:
    for key in ("wakeup_p99_ns", "p99_ns"):
        if isinstance(event.get(key), (int, float)):
            return float(event[key])
    rtt = event.get("rtt_ns")
    if isinstance(rtt, dict) and rtt.get("p99") is not None:
        return rtt["p99"] / 2
    return None


def wakeup_advice(same_p50_ns: float | None, cross_p50_ns: float | None) -> str | None:
    if not same_p50_ns or cross_p50_ns is None:
        return None
    ratio = cross_p50_ns / same_p50_ns
    if ratio >= WAKEUP_RATIO:
        return (f"cross-core wake-up is {ratio:.1f}x the same-core one: pin both sides (--cpu) and report "
                "placement; same-core numbers are not comparable to cross-core ones")
    return None


def _us(ns: float | None) -> str:
    return "-" if ns is None else f"{ns / 1000:.1f} us"


def cleanup(out: TextIO, agent_arg: str | None = None) -> int:
    """Remove what crashed runs left: namespaces (by name, their controller
    gone), unreferenced middleware shared-memory segments and files (of what
    the agent's adapters say they may leave), and what the adapters alone
    know how to find (``mwperf-agent cleanup``); none without a built agent."""
    from mwperf.execute.cleanup import clean_leftovers

    found = described_agent(agent_arg)
    left = clean_leftovers(found[1].leftovers, found[0]) if found else clean_leftovers()
    for what, names in (("namespace(s)", left.namespaces), ("shared-memory segment(s)", left.segments)):
        out.write(f"removed {len(names)} {what}{': ' + ', '.join(names) if names else ''}\n")
    if left.services:
        out.write(f"removed {len(left.services)} service leftover(s): {', '.join(left.services)}\n")
    return 0


def doctor(out: TextIO, agent_arg: str | None = None, cpu_count: int | None = None) -> int:
    def say(line: str = "") -> None:
        out.write(line + "\n")

    works = True
    source = "--agent" if agent_arg else default_agent_path()[1]
    wanted = agent_arg or default_agent_path()[0]
    agent = find_agent(agent_arg)
    say(f"agent: {wanted} ({source})")
    if agent is None:
        say("  NOT FOUND: build it (cmake -S agent -B agent/build && cmake --build agent/build), "
            "or set MWPERF_AGENT / --agent")
        works = False
    else:
        try:
            version = agent_version(agent)
            extra = ", ".join(f"{k} {version[k]}" for k in ("build_type", "compiler") if version.get(k))
            say(f"  version {version.get('version')}" + (f" ({extra})" if extra else ""))
            if version.get("build_type") and version["build_type"] != "Release":
                say("  warning: not a Release build; numbers will be pessimistic")
        except AgentError as exc:
            say(f"  version: FAILED: {exc}")
            works = False
        say("adapters:")
        try:
            described = describe(agent)
            for info in described.adapters.values():
                say(f"  {info.name:<10} {info.version or '-':<28} max {info.max_size} B  "
                    f"default {info.transport}, {info.reliability}" + (f", {info.receive}" if info.receive else ""))
                say(f"  {'':<10} supports: {info.summary()}")
                if info.license:
                    say(f"  {'':<10} license: {info.license}")
            for name, reason in described.missing:
                say(f"  {name:<10} NOT BUILT: {reason}")
        except AgentError as exc:
            say(f"  FAILED: {exc}")
            works = False

        count = cpu_count if cpu_count is not None else (os.cpu_count() or 1)
        say("thread wake-up (p50 / p99):")
        results = {}
        probes = [("same-core", (0, 0))] + ([("cross-core", (0, 1))] if count >= 2 else [])
        for label, cpus in probes:
            try:
                event = wakeup(agent, cpus)
                results[label] = _p50_ns(event)
                say(f"  {label:<10} ({cpus[0]},{cpus[1]}): {_us(_p50_ns(event))} / {_us(_p99_ns(event))}")
            except AgentError as exc:
                say(f"  {label:<10} ({cpus[0]},{cpus[1]}): FAILED: {exc}")
                works = False
        if count < 2:
            say("  one CPU only: every run is same-core")
        advice = wakeup_advice(results.get("same-core"), results.get("cross-core"))
        if advice:
            say(f"  -> {advice}")

    say("system:")
    busy_read = read_sysctl("net.core.busy_read")
    busy_poll = read_sysctl("net.core.busy_poll")
    rmem_max = read_sysctl("net.core.rmem_max")
    gov, _note = governor()
    say(f"  net.core.busy_read = {busy_read}: {advice_busy_read(busy_read)}")
    say(f"  net.core.busy_poll = {busy_poll}: {advice_busy_poll(busy_poll)}")
    say(f"  net.core.rmem_max = {rmem_max}: {advice_rmem_max(rmem_max)}")
    say(f"  cpu governor = {gov or 'n/a'}: {advice_governor(gov)}")
    if HALTPOLL.exists():
        try:
            value = HALTPOLL.read_text().strip()
        except OSError:
            value = "?"
        say(f"  guest_halt_poll_ns = {value}: guest halt-polling shapes wake-up latency in this VM "
            "(recorded in run.json)")
    say("agent: ok" if works else "agent: NOT usable")
    return 0 if works else 1
