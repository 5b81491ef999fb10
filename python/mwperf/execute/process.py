"""One running agent, one side of a test point (docs/agent-protocol.md): an
:class:`AgentProcess` reads its JSON-line events through deadlines (never
blocks forever), writes its control lines, and kills its whole process group
when asked, so nothing is ever left behind."""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import time
from collections import deque
from typing import Mapping

from mwperf.errors import AgentError

__all__ = ["AgentProcess", "describe_exit", "kill_group", "MAX_LINE_BYTES"]

#: A point's agent prints a line at most this long (a description or a result is some kilobytes). Beyond, it is
#: broken.
MAX_LINE_BYTES = 4 << 20


def describe_exit(returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"killed by {name}"
    return f"exited with code {returncode}"


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the agent's process group (started with process_group=0)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:  # pragma: no cover - unkillable
        pass


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
            assert stream is not None  # both piped
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
                chunk = os.read(key.fd, 65536)
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
        kill_group(self.proc)
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
