"""Scenario files (plan/scenario.py): the bundled presets load and every flow
validates against the recorded agent on each middleware they name; bad
input is one line naming the flow and the value, exit 2."""

from pathlib import Path

import pytest

from mwperf.cli.main import main
from mwperf.cli.scenario import plan_jobs
from mwperf.errors import PlanError
from mwperf.plan.scenario import MAX_FLOWS, flow_options, is_scenario, load_scenario
from conftest import described, run_request

PLANS = Path(__file__).resolve().parents[3] / "plans"
AGENT = described()
SCENARIOS = sorted(p.stem for p in PLANS.glob("*.yaml") if is_scenario(p))


def test_the_presets_are_there():
    assert {"robot-mobile", "robot-manipulator", "rmw-zenoh-198", "perftest-multipub"} <= set(SCENARIOS)


@pytest.mark.parametrize("name", SCENARIOS)
def test_presets_validate(name, tmp_path):
    scenario = load_scenario(PLANS / f"{name}.yaml")
    request = run_request(mw="cyclonedds,fastdds,zenoh", duration="5s", out=str(tmp_path / "r"))
    flows = [flow_options(scenario, f, request, AGENT, None, tmp_path / "r") for f in scenario.flows]
    jobs = plan_jobs(scenario, flows)
    assert [mw for mw, _, _ in jobs] == ["cyclonedds", "fastdds", "zenoh"]
    for _, label, each in jobs:
        assert label == ""
        assert [j.name for j in each] == [f.name for f in scenario.flows]
        assert all(j.point.mode == "rate" and j.point.get("duration") == 5_000_000_000 for j in each)
        # each flow keeps its own QoS over the command line's
        for job, flow in zip(each, scenario.flows):
            given = dict(flow.values).get("reliability")
            if given:
                assert job.point.get("reliability") == given[0]


def test_robot_mobile_sizes_are_the_ros_messages_plus_the_header():
    flows = {f.name: dict(f.values) for f in load_scenario(PLANS / "robot-mobile.yaml").flows}
    assert flows["rgb"]["size"] == ("2764892",)  # 1280*720*3 + ~60 B of Image fields + 32
    assert flows["cmd_vel"]["size"] == ("84",)    # Twist: 6 float64 + 4 B encapsulation + 32


def write(tmp_path, text, name="s.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_flow_of_several_publishers_and_a_file_payload(tmp_path):
    (tmp_path / "data.bin").write_bytes(bytes(100))
    scenario = load_scenario(write(tmp_path, "flows:\n - {name: a, size: 64, rate: 10, publishers: 3, subscribers: 2,"
                                             " payload: 'file:data.bin'}\n"))
    (flow,) = scenario.flows
    assert flow.publishers == 3 and flow.payload == f"file:{(tmp_path / 'data.bin').resolve()}"
    opts = flow_options(scenario, flow, run_request(mw="cyclonedds"), AGENT, None, tmp_path / "r")
    (point,) = opts.points()
    assert point.subscribers == 2


def test_the_command_lines_lists_sweep_every_flow(tmp_path):
    scenario = load_scenario(write(tmp_path, "flows:\n - {name: a, rate: 10}\n - {name: b, rate: 20, "
                                             "reliability: reliable}\n"))
    request = run_request(mw="cyclonedds", history="keep-last:1,keep-all")
    flows = [flow_options(scenario, f, request, AGENT, None, tmp_path / "r") for f in scenario.flows]
    jobs = plan_jobs(scenario, flows)
    assert [label for _, label, _ in jobs] == ["history keep-last:1", "history keep-all"]
    for (_, _, (a, b)), history in zip(jobs, ("keep-last:1", "keep-all")):
        assert a.point.get("history") == b.point.get("history") == history
        assert b.point.get("reliability") == "reliable"


BAD = [
    ("flows:\n - {name: imu, size: 300}\n", "flow 'imu': rate: missing"),
    ("flows:\n - {name: cam, size: 1000, rate: 30, payload: 'file:nope.bin'}\n",
     "flow 'cam'.payload: file:nope.bin: cannot be read"),
    ("flows:\n - {name: cam, size: 1000, rate: 30, payload: 'file:short.bin'}\n",
     "flow 'cam'.payload: file:short.bin: holds 10 bytes, less than one sample's 968"),
    ("flows:\n - {name: a, rate: 1}\n - {name: a, rate: 2}\n", "flows[1].name: a: two flows of that name"),
    ("flows:\n - {name: a, rate: 1, publishers: 65}\n", "flow 'a'.publishers: 65"),
    ("flows:\n - {name: a, rate: 1, reliability: sometimes}\n", "flow 'a'.reliability: sometimes"),
    ("flows:\n - {name: a, rate: fast}\n", "flow 'a'.rate: fast"),
    ("flows:\n - {name: a, rate: 1, wobble: 3}\n", "flow 'a'.wobble: unknown key"),
    ("flows:\n - {name: a, rate: 1, history: [keep-all, 'keep-last:1']}\n", "flow 'a': ['keep-all', 'keep-last:1'] is "
     "not a single value"),
    ("flows:\n" + " - {rate: 1}\n" * 10_000, f"flows: 10000: too many flows: at most {MAX_FLOWS}"),
    # issue 37: a name with escape sequences reached the live progress bar raw
    ('name: "evil\\e]0;owned\\a\\u202e"\nflows:\n - {name: a, rate: 1}\n',
     "name: evil\\x1b]0;owned\\x07\\u202e: 1 to 80 characters, no control character"),
    ("name: [1, 2]\nflows:\n - {name: a, rate: 1}\n", "name: [1, 2]: 1 to 80 characters"),
]


@pytest.mark.parametrize("text, expected", BAD, ids=[e for _, e in BAD])
def test_bad_scenarios(tmp_path, monkeypatch, capsys, fake_agent, text, expected):
    monkeypatch.setenv("MWPERF_AGENT", str(fake_agent))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "short.bin").write_bytes(bytes(10))
    path = write(tmp_path, text)
    code = main(["run", "--scenario", str(path), "--mw", "udp", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.splitlines()) == 1 and err.startswith("mwperf: error: ") and "Traceback" not in err, err
    assert expected in err, err
    assert not (tmp_path / "out").exists()  # nothing measured, no run directory


def test_plan_error_names_the_file(tmp_path):
    with pytest.raises(PlanError) as exc:
        load_scenario(write(tmp_path, "flows: []\n"))
    assert str(tmp_path / "s.yaml") in str(exc.value)


PAYLOADS = [
    # a directory passed validation (its st_size) and failed at agent start, exit 1
    ("flows:\n - {name: cam, size: 1000, rate: 30, payload: 'file:adir'}\n",
     "flow 'cam'.payload: file:adir: is a directory, not a file"),
    # a sparse file of 1 GiB + 1 byte: above what the agent loads (core/payload.h), failed at agent start
    ("flows:\n - {name: cam, size: 1000, rate: 30, payload: 'file:huge.bin'}\n",
     f"flow 'cam'.payload: file:huge.bin: holds {(1 << 30) + 1} bytes, more than the 1073741824 (1 GiB)"),
    # a sparse 1000 MiB file for 3 publishers, and for 2 flows of 1 publisher and 1 checking subscriber:
    # no total cap let 32 flows x 64 publishers load it (~2 GiB each)
    ("flows:\n - {name: cam, size: 1000, rate: 30, publishers: 3, payload: 'file:big.bin'}\n",
     "flows: the file: payloads load 3000 MiB in all"),
    ("flows:\n - {name: a, size: 1000, rate: 30, payload: 'file:big.bin', check_payload: true}\n"
     " - {name: b, size: 1000, rate: 30, payload: 'file:big.bin'}\n", "flows: the file: payloads load 3000 MiB in all"),
    ("flows:\n - {name: a, size: 1e308k, rate: 30}\n", "flow 'a'.size: 1e308k: size above 1TiB"),
]


@pytest.mark.parametrize("text, expected", PAYLOADS, ids=["directory", "above 1 GiB", "total", "total checked",
                                                           "huge size"])
def test_payloads_beyond_the_bounds_are_refused_at_validation(tmp_path, monkeypatch, capsys, fake_agent, text,
                                                              expected):
    monkeypatch.setenv("MWPERF_AGENT", str(fake_agent))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "adir").mkdir()
    for name, size in (("huge.bin", (1 << 30) + 1), ("big.bin", 1000 << 20)):
        with open(tmp_path / name, "wb") as sparse:
            sparse.truncate(size)
    code = main(["run", "--scenario", str(write(tmp_path, text)), "--mw", "udp", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.splitlines()) == 1 and expected in err, err
    assert not (tmp_path / "out").exists()


def test_a_payload_within_the_total_loads(tmp_path):
    with open(tmp_path / "big.bin", "wb") as sparse:
        sparse.truncate(1000 << 20)
    scenario = load_scenario(write(tmp_path, "flows:\n - {name: a, size: 1000, rate: 30, publishers: 2, "
                                             "payload: 'file:big.bin'}\n"))
    assert scenario.flows[0].publishers == 2
