"""Helper processes a middleware needs beside its two agents, one per point.

Some middlewares only talk through a daemon: iceoryx through RouDi, ROS 1
through a rosmaster. The agent names it in its description of the adapter
(``AdapterInfo.service``, e.g. ``"roudi"``); the controller runs it for each
point of that adapter: started where the agents will run before they start,
giving them extra arguments or environment, and stopped after the point,
whether the point succeeded, failed, or was interrupted. What a killed
controller leaves behind is removed by :meth:`Service.clean_stale` at the
start of the next run and by ``mwperf doctor --cleanup``.

A service is one subclass of :class:`Service` here, registered under the
name the agent uses with :func:`register`: :class:`RouDi` (iceoryx) and
:class:`RosMaster` (ROS 1). A point whose adapter names an unknown service
fails with that reason, and the run goes on. A run keeps its services across
its points (:mod:`mwperf.execute.keeper`).
"""

from __future__ import annotations

import contextlib
import grp
import os
import random
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import ClassVar, Iterator, Protocol

from mwperf.description import AdapterInfo
from mwperf.errors import ServiceError
from mwperf.execute.placement import Local, Placement

__all__ = ["Served", "Service", "SERVICES", "register", "running", "clean_stale", "RouDi", "RosMaster", "started"]


class Served(Protocol):
    """What a service reads of its point (a pair's TestPoint, a discovery point): the middleware, and the
    index it names its files after."""

    @property
    def mw(self) -> str: ...

    @property
    def index(self) -> int: ...


class Service:
    """A helper process of one point. The base class is the absence of one:
    it starts nothing and adds nothing."""

    #: The name the agent's adapter description uses (``service``).
    name: ClassVar[str] = ""

    def __init__(self, placement: Placement, point: Served, info: AdapterInfo | None = None):
        self.placement = placement  # runs the service where a role runs (placement.command)
        self.point = point
        self.info = info            # the adapter's description (service_config)

    def start(self) -> None:
        """Start the helper where the point's agents will run; ServiceError when it cannot."""

    def agent_args(self, role: str) -> list[str]:
        """Extra arguments for the agent of ``role``."""
        return []

    def agent_env(self, role: str) -> dict[str, str]:
        """Extra environment for the agent of ``role``."""
        return {}

    def stop(self) -> None:
        """Stop the helper and remove what it made; also called when start() failed half-way."""

    @classmethod
    def clean_stale(cls) -> list[str]:
        """Remove what instances of a killed controller left; the names of what was removed."""
        return []


#: name (``AdapterInfo.service``) -> the class that runs it.
SERVICES: dict[str, type[Service]] = {}


def register(cls: type[Service]) -> type[Service]:
    """Class decorator: make ``cls`` the service of its ``name``."""
    SERVICES[cls.name] = cls
    return cls


@contextlib.contextmanager
def running(info: AdapterInfo | None, placement: Placement, point: Served) -> Iterator[Service]:
    """The point's service, started, and always stopped at the end of the block."""
    if info is None or info.service is None:
        yield Service(placement, point)
        return
    service = started(info, placement, point)
    try:
        yield service
    finally:
        service.stop()


def started(info: AdapterInfo, placement: Placement, point: Served) -> Service:
    """A service started (stopped again if its start fails), the caller's to stop."""
    cls = SERVICES.get(info.service) if info.service is not None else None
    if cls is None:
        raise ServiceError(f"{point.mw}: needs the '{info.service}' service, which this controller cannot run "
                           f"(none is registered under that name in mwperf/execute/services.py)")
    service = cls(placement, point, info)
    try:
        service.start()
    except BaseException:
        service.stop()
        raise
    return service


def clean_stale() -> list[str]:
    """What every registered service's killed instances left, removed."""
    return [name for cls in SERVICES.values() for name in cls.clean_stale()]


# --- helpers ---------------------------------------------------------------------------------------

def _stop_group(proc: subprocess.Popen, grace_s: float = 5.0) -> None:
    """SIGTERM to the process group ``proc`` leads, SIGKILL after ``grace_s``."""
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=wait_s)
            break
        except subprocess.TimeoutExpired:
            continue
    else:
        return
    try:  # its group may outlive it (children)
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _pids_named(comm: str, proc: Path = Path("/proc")) -> list[int]:
    pids = []
    for entry in os.listdir(proc):
        if entry.isdigit():
            try:
                if (proc / entry / "comm").read_text().strip() == comm:
                    pids.append(int(entry))
            except OSError:
                continue
    return pids


def _remove(paths: list[Path]) -> list[str]:
    gone = []
    for path in paths:
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
            gone.append(str(path))
        except FileNotFoundError:
            continue
        except OSError:
            continue
    return gone


def _kill_recorded(pidfile: Path, comm: str) -> list[str]:
    """When the controller that wrote ``pidfile`` ("PID CONTROLLER_PID") is
    gone: kill the process group of PID if it still is a ``comm``, remove the
    file. A live controller's service is left alone."""
    try:
        pid, owner = (int(f) for f in pidfile.read_text().split()[:2])
    except (OSError, ValueError):
        return _remove([pidfile]) if pidfile.exists() else []
    if _pid_alive(str(owner)):
        return []
    gone = []
    try:
        if Path(f"/proc/{pid}/comm").read_text().strip() == comm:
            os.killpg(pid, signal.SIGKILL)
            gone.append(f"{comm} (pid {pid})")
    except (OSError, ProcessLookupError):
        pass
    return gone + _remove([pidfile])


def _write_pidfile(path: Path, pid: int, *more: str) -> None:
    """"PID CONTROLLER_PID [MORE...]": what :func:`_kill_recorded` reads (and
    what else the service's clean-up needs, e.g. RouDi's segment name)."""
    path.write_text(" ".join([str(pid), str(os.getpid()), *more]) + "\n")


# --- iceoryx: RouDi ---------------------------------------------------------------------------------

@register
class RouDi(Service):
    """iceoryx's routing and discovery daemon, one per machine: started with
    the configuration the agent names (its pools bound the message size) and
    monitoring off, stopped after the point, its shared memory and sockets
    removed. A RouDi mwperf did not start is never touched: the point is
    refused instead (iceoryx allows one per machine)."""

    name = "roudi"
    PIDFILE = Path("/tmp/mwperf-roudi.pid")  # "PID CONTROLLER_PID SEGMENT"
    SHM_DIR = Path("/dev/shm")
    READY = "RouDi is ready for clients"
    #: What RouDi and the agents' runtimes leave when killed (iceoryx 2.0).
    LEFTOVERS = ("/dev/shm/iceoryx_mgmt", "/tmp/roudi", "/tmp/roudi.lock", "/tmp/iox-unique-roudi.lock")
    START_TIMEOUT_S = 10.0

    def start(self) -> None:
        if not isinstance(self.placement, Local):
            raise ServiceError("iceoryx: RouDi and its shared memory serve one host (no --link, no --hosts)")
        exe = shutil.which("iox-roudi")
        if exe is None:
            raise ServiceError("iceoryx: iox-roudi is not installed (Debian package: iceoryx)")
        config = self.info.service_config if self.info is not None else None
        if not config or not Path(config).is_file():
            raise ServiceError(f"iceoryx: RouDi configuration {config or '(none described)'} not found "
                               f"(it is built next to the agent)")
        self.clean_stale()
        others = _pids_named("iox-roudi")
        if others:
            raise ServiceError(f"iceoryx: another iox-roudi runs on this machine (pid {others[0]}); iceoryx allows "
                               f"one per machine: stop it, or run the iceoryx points when it is gone")
        self._log = tempfile.NamedTemporaryFile(prefix="mwperf-roudi.", suffix=".log", delete=False)
        self.proc = subprocess.Popen([exe, "-c", config, "-m", "off"], stdin=subprocess.DEVNULL,
                                     stdout=self._log, stderr=subprocess.STDOUT, process_group=0)
        _write_pidfile(self.PIDFILE, self.proc.pid, *_group_names())
        deadline = time.monotonic() + self.START_TIMEOUT_S
        while time.monotonic() < deadline:
            text = Path(self._log.name).read_text(errors="replace")
            if self.READY in text:
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        last = Path(self._log.name).read_text(errors="replace").strip().splitlines()[-1:] or ["no output"]
        raise ServiceError(f"iceoryx: RouDi did not come up within {self.START_TIMEOUT_S:.0f} s: {last[0]}")

    def stop(self) -> None:
        proc = getattr(self, "proc", None)
        if proc is not None:
            _stop_group(proc)
        log = getattr(self, "_log", None)
        if log is not None:
            log.close()
            _remove([Path(log.name)])
        _remove([self.PIDFILE])
        self._remove_files(_group_names())

    @classmethod
    def _remove_files(cls, segments: list[str]) -> list[str]:
        """RouDi's files and its data ``segments`` (/dev/shm/NAME: iceoryx
        names it after the group RouDi ran under)."""
        if _pids_named("iox-roudi"):
            return []  # someone's RouDi owns them
        paths = [Path(p) for p in cls.LEFTOVERS]
        paths += [cls.SHM_DIR / name for name in segments if name and "/" not in name and name not in (".", "..")]
        paths += sorted(Path("/tmp").glob("mwperf-iox-*")) + sorted(Path("/tmp").glob("mwperf-roudi.*.log"))
        return _remove(paths)

    @classmethod
    def _recorded_segments(cls) -> list[str]:
        """The data segment the RouDi of the pidfile made: the name its
        controller recorded (the group it ran under, which may be another
        user's, or a group deleted since); this process's group for a
        pidfile without one."""
        try:
            fields = cls.PIDFILE.read_text().split()
        except OSError:
            return []
        return fields[2:] if len(fields) > 2 else _group_names()

    @classmethod
    def clean_stale(cls) -> list[str]:
        segments = cls._recorded_segments()
        gone = _kill_recorded(cls.PIDFILE, "iox-roudi")
        if gone:
            deadline = time.monotonic() + 5.0
            while _pids_named("iox-roudi") and time.monotonic() < deadline:
                time.sleep(0.05)  # until init has reaped it
        return gone + (cls._remove_files(segments) if gone else [])


def _group_names() -> list[str]:
    """iceoryx names its data segment after the group RouDi runs under."""
    try:
        return [grp.getgrgid(os.getgid()).gr_name]
    except KeyError:
        return []


# --- ROS 1: rosmaster -------------------------------------------------------------------------------

ROSMASTER = "/usr/bin/rosmaster"


@register
class RosMaster(Service):
    """A ROS 1 master of the point's own, where the publisher runs, bound to
    the publisher's address (127.0.0.1 on one host): both agents get its URI
    (ROS_MASTER_URI) and their own address (ROS_IP, which the agent also
    sets from --host/--nic). Its logs go to a temporary ROS_HOME that is
    removed with it. Run through a shell that ends it when its stdin closes,
    so a master on another host (ssh) goes with the point too."""

    name = "rosmaster"
    START_TIMEOUT_S = 15.0
    PROBE = ("import sys, xmlrpc.client as x\n"
             "try:\n    x.ServerProxy(sys.argv[1]).getPid('/mwperf_probe'); sys.exit(0)\n"
             "except Exception:\n    sys.exit(1)\n")

    def _address(self) -> str:
        return self.placement.address("pub")

    def _port(self) -> int:
        if isinstance(self.placement, Local):
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                return s.getsockname()[1]
        return random.randint(20000, 32000)  # a namespace of the point's own, or another host

    def start(self) -> None:
        if not os.path.exists(ROSMASTER) and isinstance(self.placement, Local):
            raise ServiceError(f"ros1: {ROSMASTER} is not installed (Debian package: python3-rosmaster)")
        self.uri = f"http://{self._address()}:{self._port()}"
        port = self.uri.rsplit(":", 1)[1]
        self.home = f"/tmp/mwperf-rosmaster.{os.getpid()}.{self.point.index}"
        self.pidfile = Path(f"{self.home}.pid")
        env = {"ROS_MASTER_URI": self.uri, "ROS_IP": self._address(), "ROS_HOME": self.home,
               "ROS_LOG_DIR": f"{self.home}/log", "HOME": self.home}
        script = (f"mkdir -p {shlex.quote(self.home)} && "
                  f"{{ {ROSMASTER} --core -p {port} -w 3 >{shlex.quote(self.home)}/out 2>&1 </dev/null & }}; "
                  # its end: SIGTERM, then SIGKILL only if it is still there after 1 s (no fixed wait)
                  f"m=$!; read _; kill $m 2>/dev/null; i=0; "
                  f"while kill -0 $m 2>/dev/null && [ $i -lt 50 ]; do sleep 0.02; i=$((i+1)); done; "
                  f"kill -9 $m 2>/dev/null; "
                  f"rm -rf {shlex.quote(self.home)}")
        argv = ["env", *(f"{k}={v}" for k, v in env.items()), "sh", "-c", script]
        self.proc = subprocess.Popen(self.placement.command("pub", argv), stdin=subprocess.PIPE,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, process_group=0)
        _write_pidfile(self.pidfile, self.proc.pid)
        probe = self.placement.command("pub", ["python3", "-c", self.PROBE, self.uri])
        deadline = time.monotonic() + self.START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise ServiceError(f"ros1: rosmaster exited at once (exit {self.proc.returncode})")
            if self._answers(probe):
                return
            time.sleep(0.02)
        raise ServiceError(f"ros1: rosmaster at {self.uri} did not answer within {self.START_TIMEOUT_S:.0f} s")

    def _answers(self, probe: list[str]) -> bool:
        """The master answers: asked from here on this host (a Python of its own
        per probe costs ~50 ms), else where the publisher runs."""
        if not isinstance(self.placement, Local):
            return subprocess.run(probe, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
        import xmlrpc.client

        class Bounded(xmlrpc.client.Transport):  # a master that accepts but never answers: no hang
            def make_connection(self, host):
                connection = super().make_connection(host)
                connection.timeout = 1.0
                return connection

        try:
            xmlrpc.client.ServerProxy(self.uri, transport=Bounded()).getPid("/mwperf_probe")
            return True
        except (OSError, xmlrpc.client.Error):
            return False

    def agent_env(self, role: str) -> dict[str, str]:
        return {"ROS_MASTER_URI": self.uri, "ROS_HOME": self.home, "ROS_LOG_DIR": f"{self.home}/log"}

    def stop(self) -> None:
        proc = getattr(self, "proc", None)
        if proc is not None:
            try:
                proc.stdin.close()  # the shell stops the master and removes its home
                proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
            _stop_group(proc, grace_s=1.0)
        home = getattr(self, "home", None)
        if home is not None:
            _remove([Path(f"{home}.pid")] + ([Path(home)] if isinstance(self.placement, Local) else []))

    @classmethod
    def clean_stale(cls) -> list[str]:
        """Masters (and their homes) of controllers that are gone."""
        gone = []
        for pidfile in Path("/tmp").glob("mwperf-rosmaster.*.pid"):
            gone += _kill_recorded(pidfile, "sh")
        for pid in _pids_named("rosmaster"):  # a master whose shell was killed apart from it
            try:
                environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            except OSError:
                continue
            homes = [e[len(b"ROS_HOME=/tmp/mwperf-rosmaster."):] for e in environ
                     if e.startswith(b"ROS_HOME=/tmp/mwperf-rosmaster.")]
            owner = homes[0].split(b".")[0].decode(errors="replace") if homes else ""
            if owner.isdigit() and not _pid_alive(owner):  # only homes this class names (pid.index)
                try:
                    os.kill(pid, signal.SIGKILL)
                    gone.append(f"rosmaster (pid {pid})")
                except ProcessLookupError:
                    pass
        left = [p for p in Path("/tmp").glob("mwperf-rosmaster.*.*")
                if p.is_dir() and p.name.split(".")[1].isdigit() and not _pid_alive(p.name.split(".")[1])]
        return gone + _remove(left)


def _pid_alive(text: str) -> bool:
    """The process has not ended: a zombie (ended, not yet reaped: a killed
    controller waits for init, which may take seconds) counts as gone."""
    try:
        os.kill(int(text), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        pass
    try:
        state = Path(f"/proc/{int(text)}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True  # cannot tell: keep what may be its
    return state not in ("Z", "X")
