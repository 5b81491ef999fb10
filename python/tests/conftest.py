"""Shared fixtures: the fake agent, the real agent, golden files, process
checks, the e2e guards (no packet of the session leaves loopback, no
shared-memory segment is left behind) and the session's own measurement lock."""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import stat
import subprocess
import sys
import warnings
from contextlib import contextmanager
from pathlib import Path

import pytest

from session_process import enter_session, leave_session, own_group, session_gid

TESTS = Path(__file__).resolve().parent
FIXTURES = TESTS / "fixtures"
GOLDEN = TESTS / "golden"
FAKE_AGENT = TESTS / "fake_agent.py"

#: The results store's fixtures (store_url: the same test on DuckDB and on a PostgreSQL server of the session's own).
pytest_plugins = ("store_fixtures", "measuring", "far_fixtures")
REAL_AGENT = TESTS.parents[1] / "agent" / "build" / "mwperf-agent"


def pytest_configure(config):
    config.addinivalue_line("markers", "e2e: end-to-end tests against the real mwperf-agent binary")
    # One launch a point unless a test says otherwise (--launches, a plan's launches, monkeypatch): the
    # tests are about other things, and each launch costs an agent pair's start-up (tests/plan/test_launches.py).
    os.environ["MWPERF_LAUNCHES"] = "1"
    enter_session()  # before any process is started: see session_process


def pytest_unconfigure(config):
    leave_session()


def written(directory, **kwargs) -> list[dict]:
    """A run directory's records as written (their JSON objects), read by the one loader."""
    from mwperf.results.rundir import read_records

    return [r.json for r in read_records(directory, **kwargs)]


def typed(record: dict):
    """A record (its JSON object, whole or in part) as the controller reads it: typed (mwperf.model.record)."""
    from mwperf.model.record import Record

    return Record.from_json(record)


def typed_all(records) -> list:
    """Records (JSON objects) as the controller reads them."""
    return [typed(r) for r in records]


def write_script(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


@pytest.fixture
def fake_agent(tmp_path) -> Path:
    """An executable that runs tests/fake_agent.py with this interpreter."""
    return write_script(tmp_path / "fake-agent", f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_AGENT}" "$@"\n')


def real_agent_path() -> Path | None:
    """The built agent (None when it is not built). A test that runs it measures:
    in a parallel worker it fails, saying to mark it ``measuring``."""
    import measuring  # the plugin (pytest_plugins)

    if measuring.running_in_parallel():
        pytest.fail(measuring.REFUSAL, pytrace=False)
    path = Path(os.environ.get("MWPERF_TEST_AGENT", REAL_AGENT))
    return path if path.is_file() and os.access(path, os.X_OK) else None


def built_agent() -> str:
    """The built agent's path, or the test skipped saying it is not built."""
    agent = real_agent_path()
    if agent is None:
        pytest.skip("the agent binary is not built yet")
    return str(agent)


def agent_with(mw: str = "udp") -> str:
    """The built agent's path, when it is built with `mw`; else the test is skipped."""
    import pytest

    from mwperf.execute.agent import describe

    path = real_agent_path()
    if path is None:
        pytest.skip("the agent binary is not built yet (agent/build/mwperf-agent)")
    if mw not in describe(str(path)).adapters:
        pytest.skip(f"the agent is built without {mw}")
    return str(path)


def pid_alive(pid: int) -> bool:
    """True if ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] != "Z"


def pids_with_cmdline(marker: str) -> list[int]:
    """Live processes of this session whose command line contains ``marker``:
    when the session runs under its own group (as root, :func:`session_gid`),
    only the processes in that group, which every process the session starts
    inherits; never another session's (a parallel worker, someone else's run),
    which a test must neither count nor kill."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline and pid_alive(int(entry)) and _of_this_session(int(entry)):
            found.append(int(entry))
    return found


def _of_this_session(pid: int) -> bool:
    if own_group() is None:
        return True  # no group of its own (not root): every process counts
    try:
        with open(f"/proc/{pid}/status") as handle:
            gids = next(line for line in handle if line.startswith("Gid:")).split()[1:]
    except (OSError, StopIteration):
        return False
    return str(own_group()) in gids


def check_golden(name: str, text: str) -> None:
    """Compare with tests/golden/NAME; MWPERF_UPDATE_GOLDEN=1 rewrites it."""
    path = GOLDEN / name
    if os.environ.get("MWPERF_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.exists(), f"{path} missing: run with MWPERF_UPDATE_GOLDEN=1 to create it"
    expected = path.read_text(encoding="utf-8")
    assert text == expected, f"{name} differs from the golden file (MWPERF_UPDATE_GOLDEN=1 to accept)"


# -- e2e guard: no packet of this session leaves loopback ---------------------

#: Each session's table is NFT_TABLE_PREFIX + its pid (a killed session's is removed by the next).
NFT_TABLE_PREFIX = "mwperf_test_watch_"
_active_watch: "LoopbackWatch | None" = None


def _pid_of_table(name: str) -> int | None:
    tail = name[len(NFT_TABLE_PREFIX):]
    return int(tail) if name.startswith(NFT_TABLE_PREFIX) and tail.isdigit() else None


class LoopbackWatch:
    """An nftables table (inet family, output hook) whose one rule counts the
    packets of this session's processes (their group, :func:`session_gid`)
    leaving through any interface but lo. ``reason`` says why the check
    cannot be made here (not root, no nft), and then it counts nothing.
    ``netns``: watch that network namespace instead (the guard's own test)."""

    def __init__(self, netns: str | None = None) -> None:
        self.reason: str | None = None
        self.netns = netns
        self.table = f"{NFT_TABLE_PREFIX}{os.getpid()}"
        if os.geteuid() != 0:
            self.reason = "not root"
        elif shutil.which("nft") is None:
            self.reason = "nft missing"
        elif os.getegid() != session_gid():
            self.reason = "the session does not run under its own group id"

    def _nft(self, *args: str, check: bool = True) -> str:
        prefix = ["ip", "netns", "exec", self.netns] if self.netns else []
        done = subprocess.run([*prefix, "nft", *args], capture_output=True, text=True, timeout=10)
        if check and done.returncode != 0:
            raise RuntimeError(f"nft {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def _remove_stale(self) -> None:
        """Tables of sessions that were killed (their pid is gone)."""
        for name in re.findall(r"table inet (\S+)", self._nft("list", "tables", "inet", check=False)):
            pid = _pid_of_table(name)
            if pid is not None and pid != os.getpid() and not pid_alive(pid):
                self._nft("delete", "table", "inet", name, check=False)

    def start(self) -> None:
        if self.reason:
            return
        self._remove_stale()
        self._nft("delete", "table", "inet", self.table, check=False)
        try:
            self._nft("add", "table", "inet", self.table)
            self._nft("add", "chain", "inet", self.table, "out",
                      "{ type filter hook output priority 0; policy accept; }")
            self._nft("add", "rule", "inet", self.table, "out", "oifname", "!=", "lo",
                      "meta", "skgid", str(session_gid()), "counter")
        except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
            self.stop()
            self.reason = f"nftables unusable: {exc}"

    def packets(self) -> int:
        if self.reason:
            return 0
        found = re.search(r"counter packets (\d+)", self._nft("list", "table", "inet", self.table))
        assert found, f"no counter in nft table {self.table}"
        return int(found.group(1))

    def stop(self) -> None:
        if shutil.which("nft") and os.geteuid() == 0:
            self._nft("delete", "table", "inet", self.table, check=False)


@contextmanager
def watch_loopback():
    """Yields the active LoopbackWatch (one table, reused when nested)."""
    global _active_watch
    if _active_watch is not None:
        yield _active_watch
        return
    watch = LoopbackWatch()
    watch.start()
    _active_watch = watch
    try:
        yield watch
    finally:
        _active_watch = None
        watch.stop()


@contextmanager
def count_leaving_packets():
    """Yields a dict whose "packets" is, on exit, the packets of this session
    that left a non-loopback interface meanwhile (0 when the check cannot be made)."""
    with watch_loopback() as watch:
        result = {"packets": 0, "reason": watch.reason}
        before = watch.packets()
        yield result
        result["packets"] = watch.packets() - before


@pytest.fixture
def no_packet_leaves_loopback():
    """Every e2e test: no packet of this session may leave through an interface other than lo."""
    with count_leaving_packets() as counted:
        if counted["reason"]:
            warnings.warn(f"no-packet-leaves-loopback check skipped: {counted['reason']}", stacklevel=2)
        yield
    assert counted["packets"] == 0, f"{counted['packets']} packet(s) left through a non-loopback interface"


# -- the machine's measurement lock: the suite's own ------------------------------

@pytest.fixture(scope="session", autouse=True)
def own_measurement_lock(tmp_path_factory):
    """mwperf refuses to measure while another mwperf measurement holds the
    machine (mwperf.execute.lock). The suite's measurements take a lock of
    their own (``MWPERF_LOCK_DIR``, inherited by every mwperf it starts): they
    run one after another and are never refused because of someone else's
    benchmark on this machine, nor refuse theirs."""
    from mwperf.execute.lock import ENV_LOCK_DIR

    before = os.environ.get(ENV_LOCK_DIR)
    os.environ[ENV_LOCK_DIR] = str(tmp_path_factory.mktemp("measurement-lock"))
    yield Path(os.environ[ENV_LOCK_DIR])
    if before is None:
        os.environ.pop(ENV_LOCK_DIR, None)
    else:
        os.environ[ENV_LOCK_DIR] = before


# -- e2e guard: no shared-memory segment left ----------------------------------

SHM_DIR = Path("/dev/shm")
# Not lttng-ust-wait-*: every start of an agent built with ROS 2 (also `list`) creates those,
# and a run's clean-up (not a refused command's) removes them.
SHM_PATTERNS = ("fastrtps_*", "fast_datasharing_*", "iox*", "*zenoh*", "mwp[0-9]*_*", "iceoryx_mgmt")


def shm_segments() -> set[str]:
    try:
        names = os.listdir(SHM_DIR)
    except OSError:
        return set()
    return {n for n in names if any(fnmatch.fnmatchcase(n, p) for p in SHM_PATTERNS)}


def leftover_segments(before: set[str]) -> list[str]:
    """Segments that were not there before and no live process uses (others'
    concurrent middleware runs keep theirs open)."""
    from mwperf.execute.cleanup import referenced_paths

    new = shm_segments() - before
    if not new:
        return []
    used, _ = referenced_paths()
    return sorted(n for n in new if str(SHM_DIR / n) not in used and made_by_session(SHM_DIR / n))


def made_by_session(path: Path) -> bool:
    """Created by this session's processes (their group, see session_gid()),
    not by another session running on the machine meanwhile."""
    if own_group() is None:
        return True  # not root: no group of its own, every new segment counts
    try:
        return path.stat().st_gid == own_group()
    except OSError:
        return False  # gone meanwhile: nobody left it


@pytest.fixture
def no_shm_leftovers():
    before = shm_segments()
    yield
    left = leftover_segments(before)
    assert not left, f"shared-memory segments left in {SHM_DIR}: {', '.join(left)}"


#: Keys run.json always has.
PROVENANCE_KEYS = (
    "schema_version", "run_id", "status", "started", "finished", "command", "mwperf_version",
    "git", "hostname", "kernel", "cpu_model", "vcpus", "governor", "governor_note", "clocksource",
    "sysctl", "guest_halt_poll_ns", "python", "agent", "adapters", "options", "points",
)


# -- the agent's description of itself ------------------------------------------

LIST_FIXTURE = FIXTURES / "agent-list.jsonl"


def described(only=None):
    """The real agent's ``list`` as recorded in fixtures/agent-list.jsonl (a
    test keeps it equal to the built agent's): the controller's only source of
    what can be asked, for tests that run no agent. ``only``: keep these adapters."""
    import dataclasses
    import json

    from mwperf.description import AgentInfo

    events = [json.loads(line) for line in LIST_FIXTURE.read_text().splitlines() if line.strip()]
    info = AgentInfo.from_events(events)
    if only is not None:
        info = dataclasses.replace(info, adapters={k: v for k, v in info.adapters.items() if k in only})
    return info


# -- run options as the command line spells them ----------------------------------

_CONTROLLER = ("best", "keyed", "cpu", "point_timeout", "link", "hosts", "data", "direction", "out", "reuse_agents")


def run_request(qos=None, **options):
    """A RunRequest from the options as ``mwperf run`` spells them (``mw="udp,tcp"``,
    ``latency_count="50"``, ``qos=dict(async_=True)``): a comma list of an option that
    identifies points is its items, a flag True."""
    from mwperf.plan.options import RunRequest
    from mwperf.table import snapshot

    table = snapshot()
    own, values = {}, {}
    for key, value in {**options, **(qos or {})}.items():
        key = key.rstrip("_")
        if key in _CONTROLLER:
            own[key] = value
            continue
        row = table.by_key(key)
        assert row is not None and row.user, f"{key}: not an option of mwperf run"
        if value is None or value is False:
            continue
        if row.kind == "flag":
            values[row.name] = (True,)
        elif row.point_key:
            values[row.name] = tuple(str(value).split(","))
        else:
            values[row.name] = (str(value),)
    return RunRequest(values=values, **own)


# -- ground truth: a namespace that drops every 10th UDP datagram --------------------

@contextmanager
def namespace_dropping_every_10th(match: str = "meta l4proto udp", suffix: str = ""):
    """A namespace of the test's own whose input drops exactly every 10th packet that ``match`` (nft) selects."""
    if os.geteuid() != 0 or not all(shutil.which(t) for t in ("ip", "nft")):
        pytest.skip("needs root, ip and nft")
    name = f"mwtest-{os.getpid()}{suffix}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        subprocess.run(["ip", "-n", name, "link", "set", "lo", "up"], check=True)
        rules = ("table inet mwtest {\n chain in {\n  type filter hook input priority -300;\n"
                 f"  {match} numgen inc mod 10 == 0 counter drop\n }}\n}}\n")
        subprocess.run(["ip", "netns", "exec", name, "nft", "-f", "-"], input=rules, text=True, check=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "delete", name], check=False)


@pytest.fixture
def netns_with_nth_drop():
    """A namespace of the test's own whose input drops exactly every 10th UDP datagram."""
    with namespace_dropping_every_10th() as name:
        yield name
