"""What run and sweep print at the end (the fake agent's points: the mechanics, not the figures): the
compact headline and the report's path last; with --verbose every table before the wide headline and
the run directory."""

import pytest

from mwperf.cli.main import main


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_the_headline_and_the_report_last_every_table_with_verbose(tmp_path, fake_agent, capsys, command):
    plan = tmp_path / "plan.yaml"
    plan.write_text("mw: udp\nmode: latency\nsize: [32, 64]\nduration: 100ms\nwarmup: 0s\n")
    given = {"run": ["run", "--mw", "udp", "--mode", "latency", "--size", "32,64", "--duration", "100ms",
                     "--warmup", "0"],
             "sweep": ["sweep", str(plan)]}[command]
    printed = {}
    for verbose in ((), ("--verbose",)):
        out = tmp_path / f"run{len(verbose)}"
        assert main([*given, "--agent", str(fake_agent), "--no-floor", "--db", "none", "--out", str(out),
                     *verbose]) == 0
        printed[bool(verbose)] = text = capsys.readouterr().out
        assert text.endswith(f"\nreport: {out / 'report.html'}\n") and text.count("report: ") == 1
        assert (f"\nresults: {out}\nreport: " in text) == bool(verbose)  # without --verbose the report says where
    assert printed[False].startswith("headline: ") and "\nudp " in printed[False] and "== " not in printed[False]
    assert printed[True].index("== udp latency (") < printed[True].index("== headline: latency")
    assert "== ranges:" in printed[True]  # the tables across points (threads: tests/export/test_run.py)


def test_a_run_into_a_store_says_where_the_report_is_once_and_last(tmp_path, fake_agent, capsys):
    """With a store, the store's line comes after the run's end: the report's path after it, not twice."""
    out = tmp_path / "run"
    assert main(["run", "--mw", "udp", "--mode", "latency", "--size", "32", "--duration", "100ms", "--warmup", "0",
                 "--agent", str(fake_agent), "--no-floor", "--db", str(tmp_path / "store.duckdb"),
                 "--out", str(out)]) == 0
    printed = capsys.readouterr()
    assert "results: " not in printed.out and "report: " not in printed.out
    assert printed.err.endswith(f"store: stored in {tmp_path / 'store.duckdb'}\nreport: {out / 'report.html'}\n")
