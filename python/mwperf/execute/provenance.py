"""Provenance for run.json: where, how and with what the numbers were taken.

Only reads the system (never modifies a setting). Every probe is allowed to
fail: a missing file is recorded as null.
"""

from __future__ import annotations

import os
import platform
import socket
import subprocess
import sys
from pathlib import Path

from mwperf.display import foreign_store_url, shown_store
from mwperf.version import __version__
from mwperf.errors import AgentError
from mwperf.execute.agent import agent_version, describe

__all__ = ["SYSCTLS", "collect", "system_info", "read_sysctl", "git_info", "governor"]

SYSCTLS = (
    "net.core.busy_read",
    "net.core.busy_poll",
    "net.core.rmem_max",
    "net.core.wmem_max",
    "net.core.rmem_default",
    "net.core.wmem_default",
)
HALTPOLL = Path("/sys/module/haltpoll/parameters/guest_halt_poll_ns")
GOVERNOR = Path("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
CLOCKSOURCE = Path("/sys/devices/system/clocksource/clocksource0/current_clocksource")
PACKAGE_DIR = Path(__file__).resolve().parent

def _read(path: Path | str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def _number(text: str | None):
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        return text


def read_sysctl(name: str, root: Path = Path("/proc/sys")):
    """``net.core.busy_read`` -> int (or the raw text), None if absent."""
    return _number(_read(root / name.replace(".", "/")))


def governor(path: Path = GOVERNOR) -> tuple[str | None, str | None]:
    """(governor, note); (None, 'not exposed (VM)') when cpufreq is absent."""
    value = _read(path)
    if value is None:
        return None, "not exposed (VM)"
    return value, None


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str | None:
    text = _read(cpuinfo) or ""
    for key in ("model name", "Model", "Hardware", "cpu model"):
        for line in text.splitlines():
            name, _, value = line.partition(":")
            if name.strip() == key and value.strip():
                return value.strip()
    return platform.processor() or None


def git_info(directory: Path = PACKAGE_DIR) -> dict | None:
    """{'sha': ..., 'dirty': bool} for a git checkout, else None."""
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", "-C", str(directory), *args], capture_output=True,
                                  text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    if git("rev-parse", "--is-inside-work-tree") != "true":
        return None
    sha = git("rev-parse", "HEAD")
    status = git("status", "--porcelain")
    return {"sha": sha, "dirty": None if status is None else bool(status)}


def system_info() -> dict:
    """Host facts independent of the agent."""
    gov, note = governor()
    return {
        "hostname": socket.gethostname(),
        "kernel": platform.release(),
        "cpu_model": cpu_model(),
        "vcpus": os.cpu_count(),
        "governor": gov,
        "governor_note": note,
        "clocksource": _read(CLOCKSOURCE),
        "sysctl": {name: read_sysctl(name) for name in SYSCTLS},
        "guest_halt_poll_ns": _number(_read(HALTPOLL)) if HALTPOLL.exists() else None,
        "python": platform.python_version(),
    }


def agent_info(agent: str | None) -> tuple[dict, list[dict]]:
    """({path, version, build_type, ...}, [adapters]) — errors recorded, not raised."""
    info: dict = {"path": agent, "version": None, "build_type": None}
    adapters: list[dict] = []
    if not agent:
        info["error"] = "agent not found"
        return info, adapters
    try:
        event = agent_version(agent)
        info.update({k: v for k, v in event.items() if k != "event"})
    except AgentError as exc:
        info["error"] = str(exc)
    try:
        described = describe(agent)
        adapters = [a.as_dict() for a in described.adapters.values()]
        info["missing_adapters"] = [{"name": n, "reason": r} for n, r in described.missing]
    except AgentError as exc:
        info.setdefault("error", str(exc))
    return info, adapters


def _without_passwords(argv: list[str]) -> list[str]:
    """The command line as run.json keeps it (and the report shows it): a store's password left out."""
    out = list(argv)
    for i, arg in enumerate(out):
        if arg.startswith("--db="):
            out[i] = "--db=" + shown_store(arg[5:])
        elif i and argv[i - 1] == "--db":
            out[i] = shown_store(arg)
        elif foreign_store_url(arg) or arg.lower().startswith(("postgresql://", "postgres://")):
            out[i] = shown_store(arg)  # a URL wherever it stands (an abbreviated --d, a positional)
    return out


def collect(*, run_id: str, argv: list[str], options: dict, agent: str | None, started: str) -> dict:
    """The run.json document at the start of a run (status 'running')."""
    agent_data, adapters = agent_info(agent)
    doc = {
        "schema_version": 1,
        "run_id": run_id,
        "status": "running",
        "started": started,
        "finished": None,
        "command": _without_passwords(argv),
        "mwperf_version": __version__,
        "git": git_info(),
    }
    doc.update(system_info())
    doc.update({
        "agent": agent_data,
        "adapters": adapters,
        "options": options,
        "points": {"total": None, "ok": 0, "failed": 0},
    })
    return doc


if __name__ == "__main__":  # pragma: no cover - manual inspection
    import json

    json.dump(system_info(), sys.stdout, indent=2)
    print()
