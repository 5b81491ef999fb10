import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import pid_alive, real_agent_path, write_script
from mwperf.errors import AgentError
from mwperf.execute.agent import agent_version, describe, find_agent, query, wakeup
from mwperf.execute.process import AgentProcess, describe_exit


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
    adapters = describe(str(fake_agent)).adapters
    assert list(adapters) == ["udp", "tcp", "dds"]
    assert adapters["udp"].max_size == 65507 and adapters["tcp"].reliability == "reliable"
    assert adapters["udp"].reliabilities == ("best-effort",) and adapters["udp"].transports == ("udp",)
    dds = adapters["dds"]
    assert dds.reliabilities == ("reliable", "best-effort") and dds.honours("history") and dds.honours("keyed")
    assert not dds.honours("async") and dds.receives == ("listener", "waitset") and dds.receive == "listener"
    assert dds.transports == ("udp",) and dds.honours("history") and not adapters["udp"].honours("history")
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
    monkeypatch.setattr("mwperf.execute.agent.REPO_AGENT", tmp_path / "missing")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    write_script(bindir / "mwperf-agent", "#!/bin/sh\n")
    monkeypatch.setenv("PATH", str(bindir))
    assert find_agent() == str(bindir / "mwperf-agent")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert find_agent() is None


def test_description_parsing_and_summary(fake_agent):
    info = describe(str(fake_agent))
    assert info.header_size == 32 and info.table["mode"].choices == ("latency", "throughput", "rate", "burst")
    assert info.table["reliability"].choices == ("reliable", "best-effort")
    assert info.table["clock"].choices == ("monotonic", "realtime")
    assert info.table["rate"].max == 1e9 and info.missing == ()
    assert info.vocabulary("transport") == ("udp", "tcp", "tcp-nagle") and info.vocabulary("receive") == ("listener", "waitset")
    assert info.timing_s("linger_ns") == 4.0
    assert info.adapters["udp"].summary() == "reliability best-effort; transports udp"
    assert info.adapters["dds"].summary() == ("reliability reliable,best-effort; batch, durability, history, keyed, nic, rtps, whc; "
                                              "receive listener,waitset; transports udp")


def test_an_agent_that_does_not_describe_itself_is_refused(tmp_path):
    """An older agent without its own description: nothing is guessed."""
    old = write_script(tmp_path / "old-agent", """#!/bin/sh
echo '{"event":"adapter","name":"udp","version":"1","max_size":65507,"transport":"udp","reliability":"best-effort"}'
""")
    with pytest.raises(AgentError, match="did not describe itself"):
        describe(str(old))


def test_missing_adapters_are_named(tmp_path):
    import json

    from mwperf.table import snapshot_event

    (tmp_path / "list.jsonl").write_text("\n".join([
        '{"event":"agent","version":"1","header_size":32,"missing":[{"name":"zenoh","reason":"cargo not found"}]}',
        json.dumps(snapshot_event()),
        '{"event":"adapter","name":"udp","version":"1","capabilities":{"transport":["udp"]},"limits":{"max_size":65507}}',
    ]) + "\n")
    agent = write_script(tmp_path / "agent", f"#!/bin/sh\ncat {tmp_path / 'list.jsonl'}\n")
    info = describe(str(agent))
    assert info.missing == (("zenoh", "cargo not found"),) and list(info.adapters) == ["udp"]


@pytest.mark.side_by_side  # the real agent's `list`
def test_the_recorded_description_is_the_real_agents():
    """fixtures/agent-list.jsonl (what tests without an agent validate against)
    is what the built agent says, but for versions."""
    agent = real_agent_path()
    if agent is None:
        pytest.skip("the agent binary is not built yet")
    import json

    from conftest import LIST_FIXTURE

    def strip(lines):
        # versions change, and where the agent was built (service_config is a path next to it; a
        # capability's text may name the checkout's .deps): the checkout's path is left out
        lines = [re.sub(r"/[^\s\"()]*?(?=/\.deps/|/agent/build/)", "<checkout>", l) for l in lines]
        events = [{k: v for k, v in json.loads(l).items() if k != "version"} for l in lines if l.strip()]
        for e in events:
            if isinstance(e.get("service_config"), str):
                e["service_config"] = Path(e["service_config"]).name
        return events

    live = subprocess.run([str(agent), "list"], capture_output=True, text=True, timeout=30).stdout.splitlines()
    assert strip(live) == strip(LIST_FIXTURE.read_text().splitlines()), \
        "regenerate it: agent/build/mwperf-agent list > python/tests/fixtures/agent-list.jsonl"


@pytest.mark.side_by_side  # the real agent's `list`
def test_the_option_table_snapshot_is_the_real_agents():
    """mwperf/option-table.json (what --help, completion and the record
    schema read without an agent) is the built agent's option table."""
    agent = real_agent_path()
    if agent is None:
        pytest.skip("the agent binary is not built yet")
    import json

    from mwperf.table import dump_event, snapshot_event

    live = subprocess.run([str(agent), "list"], capture_output=True, text=True, timeout=30).stdout.splitlines()
    (table,) = [json.loads(line) for line in live if '"event":"options"' in line]
    assert dump_event(table) == dump_event(snapshot_event()), \
        "regenerate it: agent/build/mwperf-agent list | python -m mwperf.table > python/mwperf/option-table.json"


def test_the_recorded_description_has_the_snapshots_table():
    """Without an agent: the recorded description's table is the snapshot."""
    import json

    from conftest import LIST_FIXTURE
    from mwperf.table import snapshot_event

    (table,) = [json.loads(line) for line in LIST_FIXTURE.read_text().splitlines() if '"event":"options"' in line]
    assert table == snapshot_event()


def test_an_agent_with_another_option_table_is_refused(tmp_path):
    """A stale agent (or controller): its options are not the ones this mwperf's command line was made of."""
    import json

    from conftest import LIST_FIXTURE

    lines = LIST_FIXTURE.read_text().splitlines()
    table = next(i for i, line in enumerate(lines) if '"event":"options"' in line)
    event = json.loads(lines[table])
    event["options"] = [r for r in event["options"] if r["name"] != "batch"]
    lines[table] = json.dumps(event)
    (tmp_path / "list.jsonl").write_text("\n".join(lines) + "\n")
    agent = write_script(tmp_path / "agent", f"#!/bin/sh\ncat {tmp_path / 'list.jsonl'}\n")
    with pytest.raises(AgentError, match=r"another option table than this mwperf \(batch differ\)"):
        describe(str(agent))


def test_an_agent_that_prints_endlessly_is_one_error_in_bounded_memory(tmp_path):
    """`--agent` naming something that prints without end (yes(1), /dev/zero):
    an AgentError once it printed more than any agent does, at once, never a
    MemoryError (the address space is limited to make sure)."""
    for body in ('exec yes "lots of output"', 'exec tr "\\0" x < /dev/zero'):
        agent = write_script(tmp_path / "endless", f"#!/bin/sh\n{body}\n")
        code = ("import resource, sys\n"
                "resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
                "from mwperf.errors import AgentError\n"
                "from mwperf.execute.agent import describe\n"
                "try:\n"
                f"    describe({str(agent)!r}, timeout=30)\n"
                "except AgentError as exc:\n"
                "    print(exc)\n")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        assert done.stdout.strip() == "'mwperf-agent list' printed more than 16 MiB (not an mwperf agent?)", done.stderr


def test_a_point_agent_line_without_end_is_dropped_not_kept():
    code = "import sys\nwhile True: sys.stdout.write('x' * 65536)\n"
    with AgentProcess(py(code), "sub") as agent:
        with pytest.raises(TimeoutError):
            agent.next_event(time.monotonic() + 1.5)
        assert len(agent._buffers["stdout"]) <= 4 << 20
        assert any("dropped" in line for line in agent.noise)
