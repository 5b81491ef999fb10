"""Versions as an axis, on records made from a fixture record with known
answers: which adapters are builds of one middleware and in which order, the
settings whose defaults differ, and ``mwperf compare --versions`` within one
run and across two run directories."""

import io

import pytest

from test_compare import run_dir
from version_records import record
from conftest import typed
from mwperf.analysis.versions import config_differences, families
from mwperf.export.compare import compare_runs
from mwperf.cli.main import main
from mwperf.errors import UsageError

def test_builds_of_one_middleware_are_found_by_the_library_they_name_first_and_ordered_by_its_version():
    records = [typed(record(mw)) for mw in ("fastdds3", "udp", "ros2-kilted", "fastdds", "cyclonedds11", "fastdds-jazzy",
                                     "cyclonedds", "ros2")]
    assert families(records) == {"fastdds": ["fastdds", "fastdds-jazzy", "fastdds3"],
                                 "cyclonedds": ["cyclonedds", "cyclonedds11"], "rcl": ["ros2", "ros2-kilted"]}
    assert families([typed(record("fastdds3")), typed(record("udp"))]) == {}  # one build: no family


def test_a_default_that_differs_is_named_and_what_names_the_run_is_not():
    old = typed(record("fastdds-jazzy", heartbeat_period_ms=3000, shm_port_queue_capacity=512))
    new = typed(record("fastdds3", heartbeat_period_ms=100, shm_port_queue_capacity=512, data_sharing="auto"))
    assert config_differences(old, new) == ["data_sharing only in new", "heartbeat_period_ms 3000 vs 100"]
    same = typed(record("fastdds3", heartbeat_period_ms=3000, shm_port_queue_capacity=512))
    assert config_differences(old, same) == []


def test_compare_versions_pairs_two_builds_within_one_run(tmp_path):
    d = run_dir(tmp_path, "run", [record("cyclonedds", 20.0), record("cyclonedds11", 30.0),
                                  record("cyclonedds", 40.0, size=65536), record("fastdds", 99.0)])
    out = io.StringIO()
    assert compare_runs([d], out, versions=["cyclonedds", "cyclonedds11"]) == 0
    text = out.getvalue()
    row = next(line for line in text.splitlines() if "1024 B" in line)
    assert row.startswith("cyclonedds/cyclonedds11 latency 1024 B") and " 1.50 " in row, text
    assert "cyclonedds 0.10.2 vs 11.0.1" in row  # the axis, named as every version difference is
    assert "65536" not in text and "fastdds" not in text.replace("cyclonedds", "")  # one build only: not paired


def test_compare_versions_across_two_run_directories_and_its_gate(tmp_path):
    spread = (1.0, 1.01, 0.99, 1.005, 0.995, 1.012)  # six launches a side: the gate decides on launches
    old = run_dir(tmp_path, "old", [dict(record("fastdds-jazzy", 40.0 * f, repetition=i, heartbeat_period_ms=3000),
                                         point=i) for i, f in enumerate(spread)])
    new = run_dir(tmp_path, "new", [dict(record("fastdds3", 48.0 * f, repetition=i, heartbeat_period_ms=100), point=i)
                                    for i, f in enumerate(spread)])
    out = io.StringIO()
    assert compare_runs([old, new], out, fail_if_slower=10, versions=["fastdds-jazzy", "fastdds3"]) == 1
    text = out.getvalue()
    assert " 1.20 " in text and "heartbeat_period_ms 3000 vs 100" in text, text
    assert "REGRESSION: fastdds-jazzy/fastdds3 latency 1024 B" in text


@pytest.mark.parametrize("names, message", [
    (["cyclonedds"], "name two builds of one middleware or more"),
    (["cyclonedds", "fastdds3"], "not builds of one middleware (cyclonedds runs on cyclonedds, fastdds3 on fastdds)"),
    (["cyclonedds", "ros2-kilted"], "ros2-kilted: no ok point of it"),
])
def test_compare_versions_refuses_what_it_cannot_pair(tmp_path, names, message):
    d = run_dir(tmp_path, "run", [record("cyclonedds"), record("fastdds3")])
    with pytest.raises(UsageError) as e:
        compare_runs([d], io.StringIO(), versions=names)
    assert message in str(e.value)


def test_the_command_line_takes_versions_and_refuses_bad_input_in_one_line(tmp_path, capsys):
    d = run_dir(tmp_path, "run", [record("ros2", 60.0), record("ros2-kilted", 57.0)])
    assert main(["compare", "--versions", "ros2,ros2-kilted", d]) == 0
    assert "ros2/ros2-kilted latency 1024 B" in capsys.readouterr().out
    assert main(["compare", "--versions", "ros2", d]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "name two builds" in err[0] and "Traceback" not in err[0]
