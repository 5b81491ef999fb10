"""``mwperf max-rate``'s command: bad input is one line and exit 2; against
the fake agent (canned results: always 0.3 % of the due samples unsent), a
search climbs to its upper bound, every probe is a schema-valid record with
its search section, and the tables end with the answer. The search meeting
ground truth is tests/e2e/test_max_rate_ground_truth.py."""

import json
import shutil

import pytest

from mwperf.cli.main import main
from mwperf.export.max_rate import max_rate_figures, max_rate_sections
from mwperf.plan.sweep_plan import parse_plan
from conftest import typed_all, written
from mwperf.model.schema import validate_record


@pytest.fixture
def agent_env(monkeypatch, fake_agent, tmp_path):
    monkeypatch.setenv("MWPERF_AGENT", str(fake_agent))
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize("args, expected", [
    ([], "--loss: max-rate needs its criterion"),
    (["--loss", "200%"], "--loss 200%: must be from 0% to 100%"),
    (["--loss", "%"], "--loss %: expected a percentage with its number"),
    (["--loss", "1%", "--p99", "soon"], "--p99 soon"),
    (["--loss", "1%", "--mode", "latency"], "--mode latency: max-rate searches over rate-mode points"),
    (["--loss", "1%", "--rate", "10,20"], "--rate 10,20: one rate"),
    (["--loss", "1%", "--bounds", "9,3"], "--bounds 9,3: the lowest rate must be below the highest"),
    (["--loss", "1%", "--reuse-agents"], "--reuse-agents: not with max-rate"),
])
def test_bad_input_is_one_line(agent_env, capsys, args, expected):
    assert main(["max-rate", "--mw", "udp", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expected in err and "Traceback" not in err


def test_bad_plan_search(agent_env, tmp_path, capsys):
    plan = tmp_path / "p.yaml"
    plan.write_text("mw: udp\nsize: 1k\nsearch: {loss: 2x}\n")
    assert main(["max-rate", str(plan)]) == 2
    assert "search.loss: 2x" in capsys.readouterr().err
    plan.write_text("mw: udp\nsize: 1k\nsearch: {loss: 1%}\n")
    assert main(["sweep", str(plan), "--dry-run"]) == 2
    assert "a max-rate plan: run it with mwperf max-rate" in capsys.readouterr().err
    assert main(["max-rate", str(plan), "--size", "2k"]) == 2
    assert "--size: with a PLAN" in capsys.readouterr().err


def test_dry_run_states_the_worst_case(agent_env, capsys):
    assert main(["max-rate", "--mw", "udp", "--size", "1k,4k", "--loss", "1%", "--duration", "2s", "--warmup", "0",
                 "--rate", "100", "--bounds", "10,10k", "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    # a noiseless bisection of 10..10k to 5 % takes 8 probes (2^8 > ln 1000 / ln 1.05); at most three times that, and 3
    assert "from 100 Hz, at most 27 probes of at most 2 s" in out[0]
    assert out[-2].startswith("at most about 2m42s") and out[-1] == "2 searches"  # 2 x 27 x (2 s + 1 s)


def test_search_records_and_answer(agent_env, tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["max-rate", "--mw", "udp", "--size", "1k", "--loss", "1%", "--rate", "100", "--bounds", "100,1000",
                 "--duration", "200ms", "--warmup", "0", "--cpu", "0,1", "--no-floor", "--db", "none",
                 "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    text = capsys.readouterr().out
    records = written(out)
    for r in records:
        validate_record(r)
    # every probe met: the posterior median climbs to the upper bound, which two probes confirm
    assert [r["rate_hz"] for r in records] == [100.0, 320.6, 564.1, 750.1, 867.1, 930.0, 1000.0, 1000.0]
    assert [r["search"]["probe"] for r in records] == list(range(1, 9))
    assert [r["search"]["done"] for r in records] == [False] * 7 + [True]
    last = records[-1]["search"]
    assert last["max_rate_hz"] == 1000.0 and "at least" in last["note"] and last["bracket"] == [939.3, 1002.0]
    # each probe its own adaptive stop, on its loss against the 1 % allowed (no --p99: not on its latency)
    assert all(r["stop_loss"] == 0.01 and r["precision"] is None and r["adaptive"] for r in records)
    assert "max rate (loss <= 1%, step 5%)" in text and "[939.3, 1002]" in text
    assert max_rate_figures(typed_all(records))[0].id == "max-rate-size"
    assert "max-rate-size" in (out / "report.html").read_text()
    run = json.loads((out / "run.json").read_text())
    assert run["options"]["search"]["loss"] == 0.01


def test_answer_table_from_records():
    crit = {"criterion": {"loss": 0.01, "p99_us": 2000.0}, "step": 0.05, "growth": 4.0, "bounds_hz": [1, 1e6],
            "phase": "bisect", "met": True, "why": "ok", "missing": 0.0, "note": None}
    records = [{"run_id": "r", "mw": "udp", "size": size, "qos": {}, "reliability": None, "transport": "udp",
                "search": {**crit, "cell": i, "probe": 9, "bracket": [top, top * 1.04], "done": True,
                           "max_rate_hz": top}} for i, (size, top) in enumerate([(4096, 300.0), (1024, 1138.0)])]
    (section,) = max_rate_sections(typed_all(records))
    assert [row.cells[:3] for row in section.rows] == [["1KiB", "1138", "9.322"], ["4KiB", "300", "9.83"]]
    assert "p99 <= 2000 us" in section.title


def test_plan_parses_its_search():
    plan = parse_plan("mw: udp\nmode: rate\nsearch: {loss: 1%, p99: 2ms, bounds: '10,100k'}\n")
    assert plan.search == {"loss": "1%", "p99": "2ms", "bounds": "10,100k"}


def test_an_interrupted_search_resumes_where_it_stopped(agent_env, tmp_path, capsys):
    """A search's run directory cut after its third probe (as an interrupted run leaves it) is finished by
    --resume with the probes an uninterrupted search makes; the same --out without it is refused."""
    args = ["max-rate", "--mw", "udp", "--size", "1k,2k", "--loss", "1%", "--rate", "100", "--bounds", "100,1000",
            "--duration", "100ms", "--warmup", "0", "--cpu", "0,1", "--no-floor", "--db", "none"]
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    assert main([*args, "--out", str(whole)]) == 0
    shutil.copytree(whole, cut)  # the same search, as its directory would be had it been cut short
    lines = (cut / "results.jsonl").read_text().splitlines(keepends=True)
    (cut / "results.jsonl").write_text("".join(lines[:3]))
    capsys.readouterr()
    assert main([*args, "--out", str(cut)]) == 2
    assert "already holds results.jsonl" in capsys.readouterr().err
    assert main(["max-rate", "--resume", str(cut), "--size", "4k"]) == 2
    assert "--resume" in capsys.readouterr().err
    assert main(["sweep", "--resume", str(cut)]) == 2
    assert f"a max-rate run: mwperf max-rate --resume {cut} finishes it" in capsys.readouterr().err
    assert main(["max-rate", "--resume", str(cut), "--db", "none"]) == 0
    done, expected = written(cut), written(whole)
    assert [(r["size"], r["rate_hz"], r["search"]["probe"]) for r in done] == \
           [(r["size"], r["rate_hz"], r["search"]["probe"]) for r in expected]
    assert [r["search"]["max_rate_hz"] for r in done if r["search"]["done"]] == [1000.0, 1000.0]
    assert len(json.loads((cut / "run.json").read_text())["resumed"]) == 1
