"""DIR/floor.json: written whole, read as untrusted, and a record's floor found."""

import json
import os

from mwperf.results.floor import FLOOR_JSON, FloorIndex, read_floor, shape_floor, write_floor
from mwperf.results.rundir import MAX_DOC_BYTES, RunDir
from floor_docs import doc, floor, stats, where


def test_written_and_read_back(tmp_path):
    rundir = RunDir(tmp_path).create()
    path = write_floor(rundir, doc())
    assert path == tmp_path / FLOOR_JSON
    assert read_floor(tmp_path) == shape_floor(doc())
    assert not list(tmp_path.glob("*.tmp"))


def test_the_lowest_pingpong_p50_at_the_same_size_placement_and_wait_is_the_floor():
    index = FloorIndex(doc(floor(), floor(0, 0, entries=[
        {"kind": "shm", "method": "futex", "size": 64, "latency_us": stats(1.5), "rtt_us": stats(3.0)}])))
    assert index.latency(*where()) == (6.0, "unix stream")
    assert index.memcpy_gbps(*where()) == 90.0
    assert index.latency(*where(pub=0, sub=0)) == (1.5, "shm futex")
    assert index.latency(*where(wait="spin")) is None          # another wait strategy
    assert index.latency(*where(size=1024)) is None            # another size
    assert index.latency(*where(pub=1, sub=0)) is None         # other cores
    assert index.latency(*where(size=70000)) is None           # skipped: no floor from it
    assert index.latency(None, None, None, 64) is None  # an imported point
    assert not FloorIndex(None) and FloorIndex(doc())


def test_unpinned_points_meet_the_unpinned_floor():
    index = FloorIndex(doc(floor(None, None)))
    assert index.latency(*where(pub=None, sub=None)) == (6.0, "unix stream")


def test_what_does_not_fit_is_left_out():
    bad = floor(entries=[
        {"kind": "tcp", "size": 64, "latency_us": stats(1.0)},                       # no such kind
        {"kind": "shm", "size": "64", "latency_us": stats(1.0)},                      # size not an integer
        {"kind": "shm", "size": 0, "latency_us": stats(1.0)},
        {"kind": "memcpy", "size": 64, "gbps": "fast"},
        {"kind": "unix", "size": 64, "latency_us": [1, 2]},
        {"kind": "shm", "size": 64, "latency_us": {"p50": True, "p99": "x"}},          # kept, its values not
        "not an entry"])
    shaped = shape_floor(doc(bad, {"cpu": {"pub": "0", "sub": 1}, "wait": "block", "entries": []}, "nothing"))
    assert len(shaped["floors"]) == 1
    (entry,) = shaped["floors"][0]["entries"]
    assert entry["latency_us"]["p50"] is None and entry["latency_us"]["p99"] is None
    assert not FloorIndex(shaped)
    assert shape_floor({"floor_version": 2, "floors": []}) is None
    assert shape_floor(["floors"]) is None


def test_read_as_untrusted(tmp_path):
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps(doc()))
    run = tmp_path / "run"
    run.mkdir()
    (run / FLOOR_JSON).symlink_to(outside)
    assert read_floor(run) is None                          # leads outside the run directory
    (run / FLOOR_JSON).unlink()
    os.mkfifo(run / FLOOR_JSON)
    assert read_floor(run) is None                          # a FIFO: not waited on
    (run / FLOOR_JSON).unlink()
    (run / FLOOR_JSON).write_text('{"floor_version": 1, "floors": [], "elapsed_s": NaN}')
    assert read_floor(run) is None                          # not JSON as it is written
    (run / FLOOR_JSON).write_text(json.dumps(doc()) + " " * MAX_DOC_BYTES)
    assert read_floor(run) is None                          # over the bound
    (run / FLOOR_JSON).unlink()
    assert read_floor(run) is None
