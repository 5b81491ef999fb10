"""Talk to the ``mwperf-agent`` binary (docs/agent-protocol.md).

* :func:`find_agent` locates the binary; :func:`describe` asks it what it
  can do (:class:`mwperf.description.AgentInfo`);
* :func:`query` runs a one-shot sub-command (``list``, ``version``,
  ``wakeup``) with a deadline;
* :class:`AgentProcess` is one side of a test point: it reads JSON-line
  events with a deadline (never blocks forever) and kills the agent's whole
  process group when asked, so nothing is ever left behind.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import subprocess
import time
from collections import deque
from pathlib import Path
from typing import Mapping

from mwperf.description import AGENT_NAME, AgentInfo, json_events
from mwperf.errors import AgentError
from mwperf.table import snapshot

__all__ = [
    "AgentProcess",
    "describe",
    "default_agent_path",
    "find_agent",
    "agent_version",
    "wakeup",
    "query",
    "describe_exit",
]

ENV_AGENT = "MWPERF_AGENT"
#: What an agent may print: a one-shot query in all, a point's agent in one
#: line (a description or a result is some kilobytes). Beyond, it is broken.
MAX_QUERY_BYTES = 16 << 20
MAX_LINE_BYTES = 4 << 20
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


def describe_exit(returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"killed by {name}"
    return f"exited with code {returncode}"


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the agent's process group (started with process_group=0)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:  # pragma: no cover - unkillable
        pass


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
        _kill_group(proc)
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
            selector.register(stream, selectors.EVENT_READ, name)
        while selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AgentError(f"{what} did not finish within {timeout:g} s")
            for key, _ in selector.select(remaining):
                chunk = os.read(key.fileobj.fileno(), 65536)
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


class AgentProcess:
    """One running agent (one side of a point), read through deadlines."""

    def __init__(self, argv: list[str], role: str, env: Mapping[str, str] | None = None):
        """Start ``argv``; ``env`` adds to this process's environment (a service's variables)."""
        self.role = role
        self.argv = argv
        self.stderr_lines: deque[str] = deque(maxlen=20)
        self.noise: deque[str] = deque(maxlen=20)  # non-JSON stdout lines
        self._events: deque[dict] = deque()
        self._buffers = {"stdout": b"", "stderr": b""}
        self._eof = {"stdout": False, "stderr": False}
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={**os.environ, **env} if env else None,
                # Its own process group (killed as one, spared the terminal's
                # Ctrl-C) but not its own session: with kernel.sched_autogroup
                # a new session is a new scheduling group, and crossing groups
                # at every wake-up adds ~0.5 us to a same-core round trip here.
                process_group=0,
            )
        except OSError as exc:
            raise AgentError(f"{role}: cannot run {argv[0]}: {exc.strerror or exc}") from None
        self._selector = selectors.DefaultSelector()
        for name, stream in (("stdout", self.proc.stdout), ("stderr", self.proc.stderr)):
            os.set_blocking(stream.fileno(), False)
            self._selector.register(stream, selectors.EVENT_READ, name)

    # -- reading ---------------------------------------------------------
    def _pump(self, timeout: float) -> None:
        """Read what is available within ``timeout`` seconds."""
        if self._eof["stdout"] and self._eof["stderr"]:
            return
        for key, _ in self._selector.select(max(timeout, 0.0)):
            name = key.data
            try:
                chunk = os.read(key.fileobj.fileno(), 65536)
            except BlockingIOError:
                continue
            if not chunk:
                self._eof[name] = True
                self._selector.unregister(key.fileobj)
                chunk_lines = [self._buffers[name]] if self._buffers[name] else []
                self._buffers[name] = b""
            else:
                data = self._buffers[name] + chunk
                *chunk_lines, self._buffers[name] = data.split(b"\n")
                if len(self._buffers[name]) > MAX_LINE_BYTES:  # a line without end: not the protocol's
                    self._buffers[name] = b""
                    chunk_lines.append(f"(a line of more than {MAX_LINE_BYTES >> 20} MiB, dropped)".encode())
            for raw in chunk_lines:
                self._take_line(name, raw.decode(errors="replace").strip())

    def _take_line(self, stream: str, line: str) -> None:
        if not line:
            return
        if stream == "stderr":
            self.stderr_lines.append(line)
            return
        try:
            event = json.loads(line)
        except ValueError:
            self.noise.append(line)
            return
        if isinstance(event, dict):
            self._events.append(event)
        else:
            self.noise.append(line)

    def next_event(self, deadline: float) -> dict | None:
        """The next event, None at end of stdout; AgentError past ``deadline``
        (a time.monotonic() value)."""
        while True:
            if self._events:
                return self._events.popleft()
            if self._eof["stdout"]:
                return None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            self._pump(min(remaining, 0.5))

    def take_event(self, kind: str) -> dict | None:
        """The first event of ``kind`` already sent, without waiting; the
        other events stay queued."""
        self._pump(0)
        for event in self._events:
            if event.get("event") == kind:
                self._events.remove(event)
                return event
        return None

    def wait_for(self, kinds: set[str], deadline: float) -> dict | None:
        """Skip events until one whose ``event`` is in ``kinds`` or ``error``."""
        while True:
            event = self.next_event(deadline)
            if event is None or event.get("event") in kinds or event.get("event") == "error":
                return event

    def wait_exit(self, deadline: float) -> int | None:
        """Exit code, or None if still running at the deadline."""
        while True:
            code = self.proc.poll()
            if code is not None:
                # drain what is left so stderr_lines is complete
                end = time.monotonic() + 0.2
                while not (self._eof["stdout"] and self._eof["stderr"]) and time.monotonic() < end:
                    self._pump(0.05)
                return code
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            if self._eof["stdout"] and self._eof["stderr"]:
                time.sleep(min(remaining, 0.02))
            else:
                self._pump(min(remaining, 0.05))

    # -- writing / ending --------------------------------------------------
    def send_line(self, line: str, close: bool = True) -> bool:
        """Write one control line to stdin; False if the agent is gone."""
        stdin = self.proc.stdin
        if stdin is None or stdin.closed:
            return False
        try:
            stdin.write(line.encode() + b"\n")
            stdin.flush()
            if close:
                stdin.close()
            return True
        except (BrokenPipeError, OSError, ValueError):
            return False

    def last_stderr(self) -> str:
        return self.stderr_lines[-1] if self.stderr_lines else ""

    def kill(self) -> None:
        """Kill the agent's process group (idempotent) and release the pipes."""
        _kill_group(self.proc)
        try:
            self._selector.close()
        except Exception:  # pragma: no cover
            pass
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass

    def __enter__(self) -> "AgentProcess":
        return self

    def __exit__(self, *exc) -> None:
        self.kill()
