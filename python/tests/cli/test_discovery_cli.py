"""Discovery as a mode of ``mwperf run`` and ``mwperf sweep``: bad input is
one line and exit 2, before anything runs (a value outside the agent's
``discover`` rows, a multicast discovery without a namespace pair, a pair's
option in discovery mode, discovery's options without it, a plan mixing
modes); with the real agent, a middleware that has no discovery mode is
refused with the agent's reason, and a point's record reaches the run
directory's discovery.jsonl, its tables and report.html."""

import json

import pytest

from conftest import built_agent, leftover_segments, shm_segments
from mwperf.cli.main import main

RUN = ["run", "--mode", "discovery", "--mw", "cyclonedds"]
BAD = [
    (RUN + ["--participants", "1"], "--participants 1: must be"),
    (RUN + ["--participants", "2,x"], "--participants 2,x"),
    (RUN + ["--participants", "2", "--topics", "0"], "--topics 0: must be"),
    (RUN + ["--participants", "2", "--discovery", "gossip"], "--discovery gossip: choose from"),
    (RUN + ["--participants", "2", "--discovery", "default"],
     "--discovery default: multicasts: it runs only on a namespace pair's link (--link netns)"),
    (RUN + ["--participants", "2", "--timeout", "soon"], "--timeout soon"),
    (RUN + ["--participants", "2", "--link", "wire"], "--link wire: unknown link kind"),
    (RUN, "--participants: required in discovery mode"),
    (RUN + ["--participants", "2", "--size", "1k"], "--size 1k: not in discovery mode"),
    (RUN + ["--participants", "2", "--launches", "3"], "--launches 3: not in discovery mode"),
    (RUN + ["--participants", "2", "--db", "none"], "--db none: not in discovery mode"),
    (["run", "--mode", "latency,discovery", "--mw", "cyclonedds", "--participants", "2"],
     "--mode latency,discovery: discovery goes alone"),
    (["run", "--mode", "latency", "--mw", "cyclonedds", "--participants", "2"],
     "--participants 2: only with --mode discovery"),
]


@pytest.mark.parametrize("args, expected", BAD, ids=[" ".join(a[2:]) for a, _ in BAD])
def test_bad_discovery_input(capsys, monkeypatch, fake_agent, tmp_path, args, expected):
    monkeypatch.setenv("MWPERF_AGENT", str(fake_agent))
    code = main([*args, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.splitlines()) == 1 and err.startswith("mwperf: error: ") and expected in err, err


@pytest.mark.parametrize("text, expected", [
    ("mode: discovery\nmw: cyclonedds\nparticipants: [1]\n", "participants: 1: must be"),
    ("mode: discovery\nmw: cyclonedds\nparticipants: [2]\ndiscovery: default\n", "discovery: default: multicasts"),
])
def test_a_bad_discovery_plan_names_its_key(capsys, monkeypatch, fake_agent, tmp_path, text, expected):
    monkeypatch.setenv("MWPERF_AGENT", str(fake_agent))
    plan = tmp_path / "d.yaml"
    plan.write_text(text)
    code = main(["sweep", str(plan), "--dry-run"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.splitlines()) == 1 and expected in err, err


def test_a_discovery_plan_expands(capsys, monkeypatch, fake_agent, tmp_path):
    monkeypatch.setenv("MWPERF_AGENT", str(fake_agent))
    plan = tmp_path / "d.yaml"
    plan.write_text("mode: discovery\nmw: [cyclonedds, fastdds]\nparticipants: [2, 5]\ntopics: [1, 10]\n")
    assert main(["sweep", str(plan), "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "8 discovery point(s)" and "fastdds participants=5 topics=10 participants-as=processes discovery=unicast" in out


@pytest.mark.e2e
@pytest.mark.side_by_side  # the agent refuses before any participant opens
def test_a_middleware_without_a_discovery_mode_is_refused(capsys, tmp_path):
    code = main(RUN[:3] + ["--agent", built_agent(), "--mw", "udp", "--participants", "2", "--force",
                           "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.splitlines()) == 1 and "--mw: 'udp' has no discovery mode: no discovery participant in this agent" in err, err


@pytest.mark.e2e
@pytest.mark.side_by_side  # loopback, its own run id and domain, no timing asserted
def test_run_in_discovery_mode_writes_its_records_tables_and_report(capsys, tmp_path):
    out = tmp_path / "out"
    code = main(RUN + ["--agent", built_agent(), "--participants", "2", "--topics", "2", "--force", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    (record,) = [json.loads(line) for line in (out / "discovery.jsonl").read_text().splitlines()]
    assert record["mode"] == "discovery" and record["remote_pairs"] == record["pairs_expected"] == 2 * 1 * 2
    assert "time to match / to the first sample (ms) vs N participants" in printed
    assert "cyclonedds  unicast    2  loopback" in printed
    assert "time to match" in (out / "report.html").read_text()
    assert main(["report", str(out)]) == 0 and "vs N participants" in capsys.readouterr().out


@pytest.mark.e2e
@pytest.mark.measuring  # apart: what is left in /dev/shm is judged for the whole machine
def test_a_discovery_run_leaves_no_segment_of_its_participants(capsys, tmp_path):
    """Zenoh's participants leave a segment of their shared memory behind them (seen: a *.zenoh file after
    every discovery run), which only the next run removed: a discovery run now cleans up after itself."""
    before = shm_segments()
    code = main(["run", "--mode", "discovery", "--mw", "zenoh", "--agent", built_agent(), "--participants", "3",
                 "--force", "--out", str(tmp_path / "out")])
    assert code == 0, capsys.readouterr().err
    assert leftover_segments(before) == []
