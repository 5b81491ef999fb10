"""Validate the options of a run: a :class:`RunRequest` becomes
:class:`RunOptions` in :func:`build_run_options`, the one validation the
command line and sweep plans share.

Every value is checked here, before any agent runs, against the agent's
description of itself: the option table's kinds, ranges, choices, modes and
capabilities (:mod:`mwperf.plan.checks`), then the rules that involve the
controller's own options (where the sides run, the CPU placement, the run
directory) or its own policy (a slow subscriber is never the echoer). What
the user can get wrong is a :class:`mwperf.errors.UsageError` naming the
option and the bad value (``--size 70000: udp carries at most 65507 bytes
per message``); a plan turns its ``option`` into the plan key.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

from mwperf.description import AgentInfo
from mwperf.errors import UnitError, UsageError
from mwperf.plan.checks import parse_values, refused_option, refused_point
from mwperf.plan.options import DEFAULT_POINT_TIMEOUT, CpuPlacement, RunOptions, RunRequest, TestPoint
from mwperf.plan.where import HostPair, LinkProfile, parse_hosts, parse_link
from mwperf.units import parse_duration_ns

__all__ = ["build_run_options", "check_point", "parse_cpu", "default_cpu", "default_out", "NET_DIR"]

NET_DIR = Path("/sys/class/net")


def default_cpu(cpu_count: int | None = None) -> CpuPlacement:
    count = cpu_count if cpu_count is not None else (os.cpu_count() or 1)
    return CpuPlacement(0, 1) if count >= 2 else CpuPlacement(0, 0)


def parse_cpu(text: str | None, cpu_count: int | None = None) -> CpuPlacement:
    """``PUB,SUB`` core numbers, or ``none`` (unpinned)."""
    count = cpu_count if cpu_count is not None else (os.cpu_count() or 1)
    if text is None:
        return default_cpu(count)
    if text.strip().lower() in ("none", "-1", "-1,-1"):
        return CpuPlacement(None, None)
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2:
        raise UsageError("--cpu", text, "expected PUB,SUB core numbers (e.g. 0,1) or 'none'")
    cores = []
    for part in parts:
        if not part.isdigit():
            raise UsageError("--cpu", text, f"'{part}' is not a core number")
        core = int(part)
        if core >= count:
            raise UsageError("--cpu", text,
                             f"core {core} does not exist (this machine has {count} CPUs: 0-{count - 1})")
        cores.append(core)
    return CpuPlacement(cores[0], cores[1])


def default_out(now: datetime | None = None) -> Path:
    now = now or datetime.now(timezone.utc)
    return Path("results") / now.strftime("%Y%m%d-%H%M%S")


def _joined(items: tuple) -> str:
    return ",".join(str(i) for i in items)


def _sugar(request: RunRequest, raw: dict) -> None:
    """--best and --keyed, the controller's words for a reliability and a keyed topic."""
    if request.best:
        given = raw.get("reliability")
        if given is not None and tuple(str(g).strip().lower() for g in given) != ("best-effort",):
            raise UsageError("--best", None, f"conflicts with --reliability {_joined(given)}")
        raw["reliability"] = ("best-effort",)
    if "instances" in raw and not request.keyed:
        raise UsageError("--instances", _joined(raw["instances"]), "needs --keyed (instances of a keyed topic)")
    if request.keyed:
        raw.setdefault("instances", ("1",))
        for item in raw["instances"]:
            if str(item).strip() == "0":
                raise UsageError("--instances", str(item), "a keyed topic has 1 instance or more")


def _applicable(request: RunRequest, values: dict[str, tuple], agent: AgentInfo) -> tuple[str, ...]:
    """The modes; every option given applies to one of them, and every option a mode requires is given."""
    table = agent.table
    modes = values.get("mode") or (table["mode"].default,)
    for name in values:
        row = table[name]
        if not any(row.applies(m) for m in modes):
            raise UsageError(row.flag, _joined(request.values.get(name, ())),
                             f"only with --mode {' or '.join(row.modes)}")
    for mode in modes:
        for row in table.user_rows:
            if row.required and row.applies(mode) and row.name != "mw" and row.name not in values:
                raise UsageError("--mode", mode, f"needs {row.flag} ({row.help})")
    return modes


def _middlewares(values: dict[str, tuple], agent: AgentInfo, check: bool) -> tuple[str, ...]:
    """The chosen middlewares; without --mw, every adapter that honours the
    options given. ``check``: each must honour them (a plan's exclude rules
    may spare a point what its middleware cannot honour: its points are checked)."""
    adapters, table = agent.adapters, agent.table
    names = values.get("mw")
    if names is None:
        names = tuple(n for n, a in adapters.items() if refused_option(table, values, a) is None) or tuple(adapters)
    missing = dict(agent.missing)
    for name in names:
        if name not in adapters and name in missing:
            raise UsageError("--mw", name, f"not available: {missing[name]}")
        if name not in adapters:
            raise UsageError("--mw", name, f"unknown middleware (available: {', '.join(adapters) or 'none'})")
        problem = refused_option(table, values, adapters[name]) if check else None
        if problem is not None:
            raise problem
    return names


def _peers(values: dict[str, tuple], agent: AgentInfo) -> None:
    """--peer-mw names middlewares built here that speak RTPS, as --mw's must (the row's capability)."""
    row = agent.table["peer-mw"]
    for name in values.get("peer-mw", ()):
        info = agent.adapters.get(name)
        if info is None:
            missing = dict(agent.missing)
            why = f"not available: {missing[name]}" if name in missing else \
                f"unknown middleware (available: {', '.join(agent.adapters) or 'none'})"
            raise UsageError(row.flag, name, why)
        if not info.honours(str(row.capability)):
            raise UsageError(row.flag, name, f"{name} cannot be the other side of a DDS point ({row.refusal})")


def _nic(values: dict[str, tuple], net_dir: Path | None) -> None:
    """--nic names an interface of this host (of another with --hosts: net_dir None)."""
    if net_dir is None:
        return
    try:
        known = sorted(os.listdir(net_dir))
    except OSError:
        return
    for nic in values.get("nic", ()):
        if "/" in nic or nic not in known:
            raise UsageError("--nic", nic, f"no such network interface (have: {', '.join(known) or 'none found'})")


def _where(request: RunRequest, mws: tuple[str, ...], values: dict[str, tuple],
           agent: AgentInfo) -> tuple[LinkProfile | None, HostPair | None]:
    """The namespace link or the ssh hosts, and what cannot cross between hosts."""
    link, hosts = request.link, request.hosts
    if link is not None or hosts is not None:
        for name in mws:
            if agent.adapters[name].hosts == "one":
                raise UsageError("--mw", name, f"one host only (shared memory); not with "
                                               f"{'--link ' + link if link is not None else '--hosts'}")
        if "shm" in values.get("transport", ()):
            where = f"--link {link}" if link is not None else "--hosts"
            raise UsageError("--transport", "shm", f"not with {where} (shared memory does not cross hosts)")
    profile = None
    if link is not None:
        profile = parse_link(link)
        if values.get("nic"):
            raise UsageError("--nic", _joined(values["nic"]),
                             f"not with --link {link} (the link has its own interfaces)")
    secured = [level for level in values.get("security", ()) if level not in (None, "none")]
    if hosts is not None and secured:
        raise UsageError("--security", secured[0], "not with --hosts: mwperf keeps the keys on this machine (it "
                                                   "copies no enclave to other hosts)")
    pair = None
    if hosts is not None:
        if link is not None:
            raise UsageError("--hosts", hosts, f"not with --link {link} (one or the other)")
        nics = values.get("nic") or (None,)
        pair = parse_hosts(hosts, request.data, nics[0])
    elif request.data is not None:
        raise UsageError("--data", request.data, "only with --hosts")
    if request.direction not in (None, "forward", "both"):
        raise UsageError("--direction", request.direction, "choose forward or both")
    if request.direction == "both" and pair is None:
        raise UsageError("--direction", "both", "only with --hosts (a namespace link is the same both ways)")
    return profile, pair


def _out(text: str | None, check_out: bool) -> Path:
    out = Path(text) if text else default_out()
    try:
        if check_out and (out / "results.jsonl").exists():
            raise UsageError("--out", str(out), "already holds results.jsonl (choose a new directory)")
        if out.exists() and not out.is_dir():
            raise UsageError("--out", str(out), "exists and is not a directory")
    except OSError as exc:  # a name too long, a directory not searchable
        raise UsageError("--out", str(out), f"not usable: {exc.strerror or exc}") from None
    return out


def _keystore(text: str | None, values: dict[str, tuple]) -> Path | None:
    """--keystore: the user's keystore for the secured points (its layout and governance are checked where the
    keys are read, :mod:`mwperf.execute.keystore`)."""
    if text is None:
        return None
    if not any(level not in (None, "none") for level in values.get("security", ())):
        raise UsageError("--keystore", text, "no point is secured (add --security auth, sign or encrypt)")
    return Path(text).expanduser()


def check_point(opts: RunOptions, point: TestPoint) -> None:
    """UsageError for a point that cannot run: above its middleware's limits,
    values that cannot go together, no sample due, a slow echoer."""
    table, adapter = opts.table, opts.adapters[point.mw]
    problem = refused_option(table, {name: (value,) for name, value in point.values}, adapter) or \
        refused_point(table, point, adapter)
    peer = opts.adapters.get(point.get("peer-mw", ""))
    if problem is None and peer is not None:  # the subscriber's and echo's side, under the peer's middleware
        sub_side = {name: (value,) for name, value in point.values if table[name].for_role("sub")}
        problem = refused_option(table, sub_side, peer) or refused_point(table, point, peer)
    if problem is not None:
        raise problem
    rate, duration = point.get("rate"), point.get("duration")
    if rate is not None and duration is not None and rate * duration / 1e9 < 1:
        raise UsageError("--rate", table["rate"].shown(rate), f"not one sample is due in --duration "
                                                             f"{table['duration'].shown(duration)} "
                                                             f"(raise the rate or the duration)")
    slow = point.get("slow-subscriber")
    if slow and point.mode == "latency" and point.subscribers < 2:
        raise UsageError("--slow-subscriber", table["slow-subscriber"].shown(slow),
                         "in latency mode needs --subscribers 2 or more (the echoer is never the slow one)")


def build_run_options(request: RunRequest, agent_info: AgentInfo, *, agent: str | None = None,
                      cpu_count: int | None = None, check_out: bool = True, check_points: bool = True) -> RunOptions:
    """Check every value; raise UsageError naming the first bad one.

    ``agent_info`` is the agent's description of itself (``mwperf-agent
    list``): its option table and adapters, the only source of what can be
    asked. ``check_out``: refuse an --out that already holds results (a
    sweep checks its directory once). ``check_points``: check every point
    (:func:`check_point`; a sweep checks those its exclude rules leave)."""
    raw = {k: tuple(v) for k, v in request.values.items()}
    _sugar(request, raw)
    values = parse_values(agent_info.table, raw, agent_info)
    _applicable(request, values, agent_info)
    mws = _middlewares(values, agent_info, check_points)
    values["mw"] = mws
    _peers(values, agent_info)
    # With --hosts, --nic names an interface of those hosts, not of this one.
    _nic(values, None if request.hosts is not None else NET_DIR)
    link, hosts = _where(request, mws, values, agent_info)
    timeout = request.point_timeout if request.point_timeout is not None else DEFAULT_POINT_TIMEOUT
    try:
        point_timeout_ns = parse_duration_ns(timeout, allow_zero=True)
    except UnitError as exc:
        raise UsageError("--point-timeout", timeout, str(exc)) from None
    if request.reuse_agents and (link is not None or hosts is not None):
        raise UsageError("--reuse-agents", None, f"not with {'--link' if link is not None else '--hosts'}: each "
                                                 "point has a placement of its own there (agents are reused on one "
                                                 "host)")
    keystore = _keystore(request.keystore, values)
    opts = RunOptions(agent=agent_info, mws=mws, values=values, cpu=parse_cpu(request.cpu, cpu_count),
                      out=_out(request.out, check_out), point_timeout_ns=point_timeout_ns, agent_path=agent,
                      link=link, hosts=hosts, both_directions=request.direction == "both",
                      reuse_agents=request.reuse_agents, keystore=keystore)
    if check_points:
        for point in opts.points():
            check_point(opts, point)
    return opts
