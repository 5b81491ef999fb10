"""Huge values (issue 37's probe, 11 cases of one cause): ``1e308k`` and
``1e300h`` overflowed into a traceback (OverflowError: cannot convert float
infinity to integer) wherever a size, duration or rate was parsed: options
of run, max-rate, floor and history, a plan's and a scenario's sizes, a
budget's limits. Each is now one line naming the value, exit 2."""

import pytest

from mwperf.cli.main import main


@pytest.fixture
def agent_env(monkeypatch, fake_agent, tmp_path):
    monkeypatch.setenv("MWPERF_AGENT", str(fake_agent))
    monkeypatch.chdir(tmp_path)


RUN = ["run", "--mw", "udp", "--out", "never"]
CASES = [
    ([*RUN, "--size", "1e308k"], "--size 1e308k: must be from 32 to 1GiB"),  # the option's own range
    ([*RUN, "--duration", "1e300h"], "--duration 1e300h: must be from 1ns to"),
    ([*RUN, "--warmup", "1e300h"], "--warmup 1e300h: must be from 0ns to"),
    ([*RUN, "--point-timeout", "1e300h"], "--point-timeout 1e300h: duration above"),
    (["history", "--size", "1e308k"], "--size 1e308k: size above 1TiB"),
    (["max-rate", "--mw", "udp", "--loss", "1%", "--bounds", "1,1e308k", "--out", "never"], "--bounds 1,1e308k"),
    (["floor", "--size", "1e308k", "--out", "never"], "--size 1e308k: must be from 1 to 64MiB"),
]


@pytest.mark.parametrize("argv, expected", CASES, ids=[e.split(":")[0] for _, e in CASES])
def test_a_huge_option_value_is_one_line(agent_env, tmp_path, capsys, argv, expected):
    assert main(argv) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and expected in lines[0], lines
    assert not (tmp_path / "never").exists()


FILES = [
    (["sweep", "plan.yaml", "--out", "never"], "plan.yaml", "mw: udp\nmode: latency\nsize: 1e308k\n",
     "size: 1e308k: must be from 32 to 1GiB"),
    (["run", "--mw", "udp", "--scenario", "s.yaml", "--out", "never"], "s.yaml",
     "name: s\nflows:\n  - name: a\n    size: 1e308k\n    rate: 10\n", "size above 1TiB"),
    (["check", "b.yaml", "."], "b.yaml", 'budgets:\n  - rss_kb.sub: "<= 1e308GiB"\n', "<= 1e308GiB: size above 1TiB"),
    (["check", "b.yaml", "."], "b.yaml", 'budgets:\n  - p99: "<= 1e300h"\n', "<= 1e300h: duration above"),
]


@pytest.mark.parametrize("argv, name, text, expected", FILES, ids=["plan", "scenario", "budget size", "budget duration"])
def test_a_huge_value_in_a_file_is_one_line(agent_env, tmp_path, capsys, argv, name, text, expected):
    (tmp_path / name).write_text(text)
    assert main(argv) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and expected in lines[0], lines
    assert not (tmp_path / "never").exists()
