"""Per-point helper processes (execute/services.py) around the fake agent:
an unknown service fails its point with the reason, a registered one is
started before the agents, gives them arguments and environment, and is
stopped after the point, also when the point fails."""

import dataclasses
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import described, run_request
from mwperf.execute import services
from mwperf.execute.keeper import ServiceKeeper
from mwperf.execute.point import Timeouts, run_point
from mwperf.execute.services import Service
from mwperf.plan.validate import build_run_options

FAST = Timeouts(ready=1.0, after_result=1.0, stop=1.0, drain=0.1, ping=0.0, blocked=0.0)


def options(tmp_path, service):
    """udp options whose adapter says it needs ``service``."""
    info = described(only=("udp",))
    udp = dataclasses.replace(info.adapters["udp"], service=service)
    opts = build_run_options(run_request(mw="udp", size="64", duration="100ms", warmup="0", cpu="0,1",
                                         out=str(tmp_path / "run"), point_timeout="0"),
                             dataclasses.replace(info, adapters={"udp": udp}), cpu_count=2)
    return opts, opts.points()[0]


def test_unknown_service_fails_the_point_with_the_reason(tmp_path, fake_agent):
    opts, point = options(tmp_path, "carrier-pigeon")
    outcome = run_point(opts, point, str(fake_agent), FAST)
    assert outcome.error.startswith("udp: needs the 'carrier-pigeon' service, which this controller cannot run")
    assert outcome.pub is None and outcome.sub is None


class Recorder(Service):
    name = "recorder"
    calls: list[str] = []

    def start(self) -> None:
        self.calls.append("start")

    def agent_args(self, role: str) -> list[str]:
        return ["--service-endpoint", f"{role}-endpoint"]

    def agent_env(self, role: str) -> dict[str, str]:
        return {"MWPERF_TEST_SERVICE": role}

    def stop(self) -> None:
        self.calls.append("stop")


@pytest.fixture
def recorder(monkeypatch):
    monkeypatch.setitem(services.SERVICES, Recorder.name, Recorder)
    monkeypatch.setattr(Recorder, "calls", [])
    return Recorder


@pytest.mark.parametrize("fault", [None, "pub-crash"])
def test_registered_service_runs_around_the_agents(tmp_path, fake_agent, monkeypatch, recorder, fault):
    log = tmp_path / "agents.log"
    monkeypatch.setenv("FAKE_AGENT_LOG", str(log))
    if fault:
        monkeypatch.setenv("FAKE_AGENT_FAULT", fault)
    opts, point = options(tmp_path, "recorder")
    outcome = run_point(opts, point, str(fake_agent), FAST)
    assert (outcome.error is None) == (fault is None)
    assert recorder.calls == ["start", "stop"]
    argvs = [json.loads(line)["argv"] for line in log.read_text().splitlines()]
    for role in ("sub", "pub"):
        argv = next(a for a in argvs if a[a.index("--role") + 1] == role)
        assert argv[argv.index("--service-endpoint") + 1] == f"{role}-endpoint"


def test_no_service_adds_nothing(tmp_path):
    opts, point = options(tmp_path, None)
    with services.running(opts.adapters["udp"], None, point) as service:
        assert type(service) is Service
        assert service.agent_args("pub") == [] and service.agent_env("sub") == {}


def test_stale_cleanup_takes_only_the_homes_it_named_of_dead_controllers():
    """Another tool's directory with the same prefix (the agent's ctest makes
    /tmp/mwperf-test-rosmaster.XXXXXX; a user may have anything) is not ours,
    and a live controller's home is not stale."""
    from mwperf.execute.services import RosMaster

    dead = subprocess.Popen(["true"])
    dead.wait()
    ours_dead = Path(f"/tmp/mwperf-rosmaster.{dead.pid}.0")
    ours_live = Path(f"/tmp/mwperf-rosmaster.{os.getpid()}.7")
    foreign = Path(tempfile.mkdtemp(prefix="mwperf-rosmaster.", dir="/tmp"))
    for d in (ours_dead, ours_live):
        d.mkdir(exist_ok=True)
    try:
        RosMaster.clean_stale()
        assert not ours_dead.exists()
        assert ours_live.exists() and foreign.exists()
    finally:
        for d in (ours_dead, ours_live, foreign):
            shutil.rmtree(d, ignore_errors=True)


def _isolated_roudi(monkeypatch, tmp_path):
    """RouDi's clean-up on files of this test's own (its pidfile, /dev/shm, leftovers)."""
    from mwperf.execute.services import RouDi

    shm = tmp_path / "shm"
    shm.mkdir()
    monkeypatch.setattr(RouDi, "PIDFILE", tmp_path / "mwperf-roudi.pid")
    monkeypatch.setattr(RouDi, "SHM_DIR", shm)
    monkeypatch.setattr(RouDi, "LEFTOVERS", (str(shm / "iceoryx_mgmt"),))
    monkeypatch.setattr(services, "_pids_named", lambda comm, proc=None: [])
    return RouDi, shm


def test_a_killed_roudi_of_another_group_leaves_nothing(monkeypatch, tmp_path):
    """The data segment is named after the group RouDi ran under: the one the
    pidfile records goes, even when it is not this process's group (another
    user's run, a test session's group deleted since); other files stay."""
    RouDi, shm = _isolated_roudi(monkeypatch, tmp_path)
    dead = subprocess.Popen(["true"])
    dead.wait()
    for name in ("iceoryx_mgmt", "mwperf-test-4242", "their-postgres", *services._group_names()):
        (shm / name).write_bytes(b"x")
    RouDi.PIDFILE.write_text(f"{dead.pid} {dead.pid} mwperf-test-4242\n")
    RouDi.clean_stale()
    assert sorted(os.listdir(shm)) == sorted(["their-postgres", *services._group_names()])
    assert not RouDi.PIDFILE.exists()


def test_a_pidfile_without_a_segment_means_this_group(monkeypatch, tmp_path):
    RouDi, shm = _isolated_roudi(monkeypatch, tmp_path)
    (shm / "other").write_bytes(b"x")
    for name in services._group_names():
        (shm / name).write_bytes(b"x")
    RouDi.PIDFILE.write_text("999999999 999999999\n")  # an older controller's
    RouDi.clean_stale()
    assert os.listdir(shm) == ["other"]


def test_a_killed_controller_not_yet_reaped_is_gone():
    """A zombie (ended, its parent not told yet) holds nothing: its services' leftovers are stale."""
    child = subprocess.Popen(["true"])
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # ended, not reaped
    try:
        assert Path(f"/proc/{child.pid}").exists()
        assert services._pid_alive(str(child.pid)) is False
        assert services._pid_alive(str(os.getpid())) is True
    finally:
        child.wait()


def test_the_keeper_starts_a_service_once_for_the_run_and_anew_after_a_failed_point(tmp_path, fake_agent, monkeypatch,
                                                                                    recorder):
    opts, point = options(tmp_path, "recorder")
    keeper = ServiceKeeper()
    said = []
    for fault in (None, None, "pub-crash", None):
        if fault:
            monkeypatch.setenv("FAKE_AGENT_FAULT", fault)
        else:
            monkeypatch.delenv("FAKE_AGENT_FAULT", raising=False)
        outcome = run_point(opts, point, str(fake_agent), FAST, keeper=keeper)
        assert (outcome.error is None) == (fault is None)
        said.append(outcome.service)
    assert recorder.calls == ["start", "stop", "start"]  # the failed point's instance is not the next point's
    keeper.stop()
    assert recorder.calls == ["start", "stop", "start", "stop"]
    assert said == [{"name": "recorder", "instance": 1, "served_before": 0},
                    {"name": "recorder", "instance": 1, "served_before": 1},
                    {"name": "recorder", "instance": 1, "served_before": 2},
                    {"name": "recorder", "instance": 2, "served_before": 0}]


def test_the_keeper_keeps_nothing_for_a_point_without_a_service(tmp_path, fake_agent, recorder):
    opts, point = options(tmp_path, None)
    keeper = ServiceKeeper()
    outcome = run_point(opts, point, str(fake_agent), FAST, keeper=keeper)
    assert outcome.error is None and outcome.service is None and keeper.current is None
