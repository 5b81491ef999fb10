"""Talk to the ``mwperf-agent`` binary (docs/agent-protocol.md).

* :func:`find_agent` locates the binary; :func:`describe` asks it what it
  can do (:class:`mwperf.description.AgentInfo`);
* :func:`query` runs a one-shot sub-command (``list``, ``version``,
  ``wakeup``) with a deadline;
* one side of a test point, a running agent, is an
  :class:`~mwperf.execute.process.AgentProcess`.
"""

from __future__ import annotations

import os
import selectors
import shutil
import subprocess
import time
from pathlib import Path

from mwperf.description import AGENT_NAME, AgentInfo, json_events
from mwperf.errors import AgentError
from mwperf.execute.process import describe_exit, kill_group
from mwperf.table import snapshot

__all__ = [
    "describe",
    "default_agent_path",
    "find_agent",
    "agent_version",
    "wakeup",
    "query",
]

ENV_AGENT = "MWPERF_AGENT"
#: What an agent may print: a one-shot query in all, a point's agent in one
#: line (a description or a result is some kilobytes). Beyond, it is broken.
MAX_QUERY_BYTES = 16 << 20
REPO_ROOT = Path(__file__).resolve().parents[3]
REPO_AGENT = REPO_ROOT / "agent" / "build" / AGENT_NAME


def default_agent_path() -> tuple[str, str]:
    """Return (path, where-it-came-from); the path may not exist."""
    env = os.environ.get(ENV_AGENT)
    if env:
        return env, f"${ENV_AGENT}"
    if REPO_AGENT.exists():
        return str(REPO_AGENT), "repository build"
    found = shutil.which(AGENT_NAME)
    if found:
        return found, "PATH"
    return str(REPO_AGENT), "repository build (missing)"


def find_agent(explicit: str | None = None) -> str | None:
    """The agent to use: ``explicit`` if given, else the default; None if missing."""
    path = explicit if explicit else default_agent_path()[0]
    if os.sep not in path:
        return shutil.which(path)
    if os.path.isfile(path) and os.access(path, os.X_OK):
        return path
    return None


def query(agent: str, args: list[str], timeout: float = 10.0) -> list[dict]:
    """Run ``agent ARGS`` to completion and return its JSON events.

    Raises AgentError on a timeout, a non-zero exit or an ``error`` event.
    """
    try:
        proc = subprocess.Popen(
            [agent, *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            process_group=0,
        )
    except OSError as exc:
        raise AgentError(f"cannot run {agent}: {exc.strerror or exc}") from None
    try:
        out, err = _bounded_output(proc, timeout, f"'{AGENT_NAME} {' '.join(args)}'")
    finally:
        kill_group(proc)
    events = json_events(out.decode(errors="replace").splitlines())
    for event in events:
        if event.get("event") == "error":
            raise AgentError(str(event.get("error")))
    if proc.returncode != 0:
        last = _last_line(err.decode(errors="replace"))
        raise AgentError(f"'{AGENT_NAME} {' '.join(args)}' {describe_exit(proc.returncode)}"
                         + (f": {last}" if last else ""))
    return events


def _bounded_output(proc: subprocess.Popen, timeout: float, what: str) -> tuple[bytes, bytes]:
    """(stdout, stderr) of ``proc`` once it ends; AgentError when it runs past
    ``timeout`` or prints more than MAX_QUERY_BYTES (an agent printing
    endlessly must not take all memory)."""
    chunks: dict[str, list[bytes]] = {"stdout": [], "stderr": []}
    total = 0
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as selector:
        for name, stream in (("stdout", proc.stdout), ("stderr", proc.stderr)):
            assert stream is not None  # both piped
            selector.register(stream, selectors.EVENT_READ, name)
        while selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AgentError(f"{what} did not finish within {timeout:g} s")
            for key, _ in selector.select(remaining):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                total += len(chunk)
                if total > MAX_QUERY_BYTES:
                    raise AgentError(f"{what} printed more than {MAX_QUERY_BYTES >> 20} MiB (not an mwperf agent?)")
                chunks[key.data].append(chunk)
    try:
        proc.wait(timeout=max(deadline - time.monotonic(), 0.1))
    except subprocess.TimeoutExpired:
        raise AgentError(f"{what} did not finish within {timeout:g} s") from None
    return b"".join(chunks["stdout"]), b"".join(chunks["stderr"])


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


#: What ``list`` said, by :func:`_identity`: a run asks for the description more than once (its command line,
#: its provenance), and ``list`` loads every adapter's library (~0.2 s).
_described: dict[tuple, AgentInfo] = {}


def _identity(agent: str) -> tuple | None:
    """The agent's file as it is now (a rebuilt one is another) and the environment it would see; None: unknown."""
    try:
        st = os.stat(agent)
    except OSError:
        return None
    return os.path.realpath(agent), st.st_ino, st.st_size, st.st_mtime_ns, frozenset(os.environ.items())


def describe(agent: str, timeout: float = 10.0) -> AgentInfo:
    """The agent's description of itself (``mwperf-agent list``), asked once
    per agent file and environment. Its option table must be the one this
    controller's command line and record schema were made from (the
    snapshot, :mod:`mwperf.table`)."""
    key = _identity(agent)
    if key is not None and key in _described:
        return _described[key]
    info = AgentInfo.from_events(query(agent, ["list"], timeout))
    if not info.adapters:
        raise AgentError(f"'{AGENT_NAME} list' reported no adapter")
    if info.table != snapshot():
        theirs, ours = set(info.table.rows), set(snapshot().rows)
        differ = sorted({r.name for r in theirs ^ ours}) or ["its limits or conflicts"]
        raise AgentError(f"{agent} has another option table than this mwperf ({', '.join(differ[:5])} differ): "
                         f"rebuild the agent (make agent), or this mwperf's snapshot (python -m mwperf.table)")
    if key is not None:
        _described[key] = info
    return info


def agent_version(agent: str, timeout: float = 10.0) -> dict:
    for event in query(agent, ["version"], timeout):
        if event.get("event") == "version":
            return event
    raise AgentError(f"'{AGENT_NAME} version' printed no version event")


def wakeup(agent: str, cpus: tuple[int, int], timeout: float = 30.0) -> dict:
    for event in query(agent, snapshot().argv("wakeup", {"cpus": cpus}), timeout):
        if event.get("event") == "wakeup":
            return event
    raise AgentError(f"'{AGENT_NAME} wakeup' printed no wakeup event")
