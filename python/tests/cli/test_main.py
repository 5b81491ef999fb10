"""Bad input: one line on stderr naming the value, exit code 2, no traceback."""

import os
import subprocess
import sys

import pytest

from mwperf.cli.main import main


@pytest.fixture
def agent_env(monkeypatch, fake_agent, tmp_path):
    """Validation works from the agent's description of itself (`list`)."""
    monkeypatch.setenv("MWPERF_AGENT", str(fake_agent))
    monkeypatch.chdir(tmp_path)


BAD = [
    (["--size", "0"], "--size 0"),
    (["--size", "-5"], "--size -5"),
    (["--size", "16"], "--size 16: must be from 32 to 1GiB"),
    (["--size", "70000"], "--size 70000: udp carries at most 65507 bytes per message"),
    (["--mw", "tcp", "--size", "17M"], "--size 17MiB: tcp carries at most 16777216 bytes per message: mwperf's framing cap"),
    (["--size", "5parsecs"], "--size 5parsecs: unknown size unit 'parsecs'"),
    (["--size", "32,,64"], "--size 32,,64"),
    (["--mode", "rate", "--rate", "0"], "--rate 0"),
    (["--mode", "rate", "--rate", "-100"], "--rate -100"),
    (["--mode", "rate", "--rate", "fast"], "--rate fast"),
    (["--mode", "rate", "--rate", "10parsecs"], "--rate 10parsecs"),
    (["--mode", "latency", "--rate", "100"], "--rate 100: only with --mode rate"),
    (["--mode", "rate"], "--mode rate: needs --rate"),
    (["--mw", "foo"], "--mw foo: unknown middleware"),
    (["--mw", "udp,zenoh"], "--mw zenoh: unknown middleware"),
    (["--mode", "bogus"], "--mode bogus: choose from latency, throughput, rate, burst"),
    (["--duration", "5parsecs"], "--duration 5parsecs: unknown duration unit 'parsecs'"),
    (["--duration", "0"], "--duration 0"),
    (["--warmup", "-1s"], "--warmup -1s"),
    (["--point-timeout", "soon"], "--point-timeout soon"),
    (["--cpu", "0,99"], "--cpu 0,99: core 99 does not exist"),
    (["--cpu", "0"], "--cpu 0"),
    (["--cpu", "a,b"], "--cpu a,b"),
    (["--wait", "sleepy"], "--wait sleepy"),
    (["--latency-count", "-1"], "--latency-count -1"),
    (["--latency-count", "x"], "--latency-count x"),
    (["--agent", "/no/such/agent"], "--agent /no/such/agent"),
    (["--bogus"], "--bogus"),
    (["--size"], "--size"),
    (["--format", "pdf"], "pdf"),
    (["--reliability", "reliable"], "--reliability reliable: not supported by udp"),
    (["--mw", "tcp", "--best"], "--reliability best-effort: not supported by tcp"),
    (["--mw", "tcp", "--keyed", "--instances", "5"], "--instances 5: not supported by tcp (no keyed topics)"),
    (["--instances", "5"], "--instances 5: needs --keyed"),
    (["--transport", "shm"], "--transport shm: choose from udp, tcp, tcp-nagle, default"),
    (["--transport", "tcp"], "--transport tcp: not supported by udp (choose from: udp)"),
    (["--mode", "latency", "--latency-count", "5"], "--latency-count 5: only with --mode throughput"),
    (["--mode", "rate", "--rate", "1e30"], "--rate 1e30: must be from"),
    (["--clock", "sundial"], "--clock sundial: choose from monotonic, realtime"),
    (["--history", "keep-all"], "--history keep-all: not supported by udp"),
    (["--history", "keep-last:0"], "--history keep-last:0: expected keep-last:N (N from 1 to 1000000)"),
    (["--durability", "forever"], "--durability forever: choose from volatile, transient-local"),
    (["--async"], "--async: not supported by udp"),
    (["--receive", "listener"], "--receive listener: not supported by udp"),
    (["--nic", "nosuch0"], "--nic nosuch0: not supported by udp (raw sockets always use loopback)"),
    (["--mw", "dds", "--nic", "nosuch0"], "--nic nosuch0: no such network interface"),
    (["--match-timeout", "soon"], "--match-timeout soon"),
    (["--match-timeout", "-1s"], "--match-timeout -1s"),
    (["--reuse-agents", "--link", "netns"], "--reuse-agents: not with --link: each point has a placement of its own"),
    (["--reuse-agents", "--scenario", "s.yaml"], "--reuse-agents: not with --scenario"),
]


@pytest.mark.parametrize("args, expected", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_run_input(agent_env, capsys, args, expected):
    code = main(["run", "--mw", "udp", "--duration", "1s", *args]
                if "--mw" not in args else ["run", "--duration", "1s", *args])
    err = capsys.readouterr().err
    assert code == 2
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("mwperf: error: ")
    assert expected in lines[0]
    assert "Traceback" not in err


def test_bad_command(capsys):
    assert main(["explode"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "explode" in err


def test_no_command(capsys):
    assert main([]) == 2
    assert capsys.readouterr().err.startswith("mwperf: error: a command is required")


def test_report_missing_dir(tmp_path, capsys):
    assert main(["report", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "nowhere" in err


def test_out_already_used(agent_env, tmp_path, capsys):
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "results.jsonl").write_text("")
    assert main(["run", "--mw", "udp", "--out", str(tmp_path / "old")]) == 2
    assert "already holds results.jsonl" in capsys.readouterr().err


def test_help_and_version(capsys):
    assert main(["--version"]) == 0
    assert "mwperf" in capsys.readouterr().out
    assert main(["run", "--help"]) == 0
    assert "--point-timeout" in capsys.readouterr().out


def test_missing_default_agent_is_one_line(monkeypatch, tmp_path, capsys):
    monkeypatch.delenv("MWPERF_AGENT", raising=False)
    monkeypatch.setattr("mwperf.execute.agent.REPO_AGENT", tmp_path / "no-such-agent")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--mw", "udp", "--size", "64"]) == 1
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "agent not found" in err


def test_env_agent_missing(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("MWPERF_AGENT", str(tmp_path / "gone"))
    assert main(["run", "--mw", "udp"]) == 2
    assert "MWPERF_AGENT=" in capsys.readouterr().err


def test_subprocess_python_m(tmp_path):
    env = dict(os.environ, MWPERF_AGENT="")
    done = subprocess.run([sys.executable, "-m", "mwperf", "run", "--mw", "udp", "--size", "70000"],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60)
    assert done.returncode == 2
    assert done.stderr == ("mwperf: error: --size 70000: udp carries at most 65507 bytes per message:"
                           " the largest UDP payload over IPv4: 65535 - 8 (UDP header) - 20 (IPv4 header)\n")
    done = subprocess.run([sys.executable, "-m", "mwperf", "run", "--nope"],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60)
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1 and "--nope" in done.stderr


@pytest.mark.parametrize("args, expected", [
    (["--mw", "dds", "--async"], "--async: not supported by dds (no asynchronous publishing)"),
    (["--mw", "dds", "--transport", "tcp"], "--transport tcp: not supported by dds (choose from: udp)"),
    (["--mw", "dds", "--wait", "spin", "--receive", "listener"], "--wait spin: not with --receive listener (the "
                                                                 "middleware's own thread delivers; choose another "
                                                                 "--receive) (dds)"),
    (["--mw", "dds,udp", "--history", "keep-all"], "--history keep-all: not supported by udp (no history QoS)"),
    (["--mw", "dds,tcp", "--reliability", "best-effort"], "--reliability best-effort: not supported by tcp "
                                                           "(choose from: reliable)"),
])
def test_qos_refused_with_the_agents_list(fake_agent, monkeypatch, tmp_path, capsys, args, expected):
    monkeypatch.setenv("MWPERF_AGENT", str(fake_agent))
    monkeypatch.chdir(tmp_path)
    assert main(["run", *args]) == 2
    err = capsys.readouterr().err
    assert err == f"mwperf: error: {expected}\n"
    assert not (tmp_path / "results").exists()


def test_help_lists_the_qos_options(capsys):
    assert main(["run", "--help"]) == 0
    out = capsys.readouterr().out
    for option in ("--reliability", "--best", "--history", "--durability", "--keyed", "--instances", "--async",
                   "--receive", "--transport", "--nic", "--match-timeout"):
        assert option in out
