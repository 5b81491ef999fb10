import os
import sys
import time

import pytest

from conftest import pid_alive, write_script
from mwperf.agent import (
    FALLBACK_ADAPTERS, AgentError, AgentProcess, Supports, agent_version, describe_exit, find_agent,
    list_adapters, query, wakeup,
)


def py(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_events_split_across_reads_and_noise():
    code = ("import sys,time\n"
            "sys.stdout.write('{\"event\":\"re'); sys.stdout.flush(); time.sleep(0.1)\n"
            "sys.stdout.write('ady\",\"port\":5}\\nnot json\\n[1]\\n'); sys.stdout.flush()\n"
            "sys.stderr.write('warn 1\\nwarn 2\\n')\n")
    with AgentProcess(py(code), "sub") as agent:
        event = agent.next_event(time.monotonic() + 5)
        assert event == {"event": "ready", "port": 5}
        assert agent.next_event(time.monotonic() + 5) is None
        assert agent.wait_exit(time.monotonic() + 5) == 0
        assert list(agent.noise) == ["not json", "[1]"]
        assert agent.last_stderr() == "warn 2"


def test_deadline_never_blocks_forever():
    with AgentProcess(py("import time; time.sleep(60)"), "pub") as agent:
        start = time.monotonic()
        with pytest.raises(TimeoutError):
            agent.next_event(time.monotonic() + 0.3)
        assert time.monotonic() - start < 2
        assert agent.wait_exit(time.monotonic() + 0.1) is None
    assert agent.proc.poll() is not None


def test_kill_takes_the_whole_group(tmp_path):
    pidfile = tmp_path / "child.pid"
    code = ("import subprocess,sys,time\n"
            "c=subprocess.Popen([sys.executable,'-c','import time; time.sleep(60)'])\n"
            f"open({str(pidfile)!r},'w').write(str(c.pid))\n"
            "print('{\"event\":\"ready\"}', flush=True); time.sleep(60)\n")
    agent = AgentProcess(py(code), "sub")
    assert agent.next_event(time.monotonic() + 10)["event"] == "ready"
    child = int(pidfile.read_text())
    assert pid_alive(child)
    agent.kill()
    agent.kill()  # idempotent
    deadline = time.monotonic() + 5
    while pid_alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pid_alive(child)


def test_send_line_to_dead_process():
    agent = AgentProcess(py("pass"), "sub")
    agent.wait_exit(time.monotonic() + 5)
    time.sleep(0.1)
    agent.send_line("stop 5")  # must not raise
    agent.kill()
    assert agent.send_line("stop 5") is False


def test_missing_binary():
    with pytest.raises(AgentError, match="cannot run"):
        AgentProcess(["/no/such/binary"], "sub")


def test_describe_exit():
    assert describe_exit(3) == "exited with code 3"
    assert describe_exit(-9) == "killed by SIGKILL"


def test_queries_against_fake_agent(fake_agent):
    adapters = list_adapters(str(fake_agent))
    assert list(adapters) == ["udp", "tcp", "dds"]
    assert adapters["udp"].max_size == 65507 and adapters["tcp"].reliability == "reliable"
    assert adapters["udp"].supports == FALLBACK_ADAPTERS["udp"].supports
    assert adapters["tcp"].supports == FALLBACK_ADAPTERS["tcp"].supports
    dds = adapters["dds"].supports
    assert dds.reliable and dds.best_effort and dds.history and dds.keyed and not dds.async_
    assert dds.transports == ("udp",) and dds.qos and not adapters["udp"].supports.qos
    assert agent_version(str(fake_agent))["version"] == "9.9.9-fake"
    assert wakeup(str(fake_agent), (0, 1))["wakeup_p50_ns"] == 20000


def test_query_timeout_and_failure(tmp_path):
    sleeper = write_script(tmp_path / "sleeper", "#!/bin/sh\nsleep 60\n")
    start = time.monotonic()
    with pytest.raises(AgentError, match="did not finish"):
        query(str(sleeper), ["list"], timeout=0.3)
    assert time.monotonic() - start < 5
    failing = write_script(tmp_path / "failing", "#!/bin/sh\necho 'broken build' >&2\nexit 4\n")
    with pytest.raises(AgentError, match="exited with code 4: broken build"):
        query(str(failing), ["list"])


def test_find_agent(tmp_path, monkeypatch, fake_agent):
    assert find_agent(str(fake_agent)) == str(fake_agent)
    assert find_agent(str(tmp_path / "nope")) is None
    monkeypatch.setenv("MWPERF_AGENT", str(fake_agent))
    assert find_agent() == str(fake_agent)
    monkeypatch.delenv("MWPERF_AGENT")
    monkeypatch.setattr("mwperf.agent.REPO_AGENT", tmp_path / "missing")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    write_script(bindir / "mwperf-agent", "#!/bin/sh\n")
    monkeypatch.setenv("PATH", str(bindir))
    assert find_agent() == str(bindir / "mwperf-agent")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert find_agent() is None


def test_supports_parsing_and_summary():
    event = {"reliable": True, "best_effort": True, "history": True, "durability": True, "keyed": True,
             "async": True, "batching": True, "listener": True, "waitset": True, "transports": "udp,shm"}
    supports = Supports.from_event(event)
    assert supports.async_ and supports.batching and supports.transports == ("udp", "shm")
    assert supports.as_dict() == event
    assert supports.summary() == ("reliability reliable,best-effort; history, durability, keyed, async, listener, "
                                  "waitset, batch; transports udp,shm")
    assert FALLBACK_ADAPTERS["udp"].supports.summary() == "reliability best-effort; transports udp"
    assert Supports.from_event(None) == Supports()
    assert Supports.from_event("junk", FALLBACK_ADAPTERS["tcp"].supports) == FALLBACK_ADAPTERS["tcp"].supports


def test_list_without_supports_keeps_only_the_defaults(tmp_path):
    """An older agent: the adapter's own reliability and transport, nothing more."""
    old = write_script(tmp_path / "old-agent", """#!/bin/sh
echo '{"event":"adapter","name":"zenoh","version":"1","max_size":1000,"transport":"tcp","reliability":"reliable"}'
echo '{"event":"adapter","name":"udp","version":"1","max_size":65507,"transport":"udp","reliability":"best-effort"}'
""")
    adapters = list_adapters(str(old))
    assert adapters["zenoh"].supports == Supports(reliable=True, transports=("tcp",))
    assert adapters["udp"].supports == FALLBACK_ADAPTERS["udp"].supports
