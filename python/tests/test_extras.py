"""The dependencies only some commands need are extras (mwperf.extras): with
the module made unimportable (as where its extra is not installed), the
command that needs it says which extra to install in one line (exit 2) and
leaves nothing behind; the commands that do not need it work."""

from __future__ import annotations

import shutil
import sys

import pytest

from conftest import FIXTURES
from mwperf.cli.main import main


@pytest.fixture
def run(tmp_path):
    path = tmp_path / "run"
    path.mkdir()
    shutil.copy(FIXTURES / "results.jsonl", path / "results.jsonl")
    return path


def _without(monkeypatch, module: str) -> None:
    """``module`` and its submodules unimportable, as when it is not installed (its submodules too: one
    another test imported in this worker would otherwise half-import it: "cannot import name compute")."""
    for name in [m for m in sys.modules if m == module or m.startswith(f"{module}.")] or [module]:
        monkeypatch.setitem(sys.modules, name, None)


@pytest.mark.parametrize("module, argv, extra", [
    ("pyarrow", ["export", "{run}", "--format", "parquet"], "parquet"),
    ("kaleido", ["report", "{run}", "--format", "svg"], "figures"),
    ("psycopg", ["db", "ingest", "{run}", "--db", "postgresql://mwperf@127.0.0.1:9/none"], "postgresql"),
])
def test_a_command_without_its_extra_says_which_to_install(run, monkeypatch, capsys, module, argv, extra):
    before = sorted(p.name for p in run.iterdir())
    _without(monkeypatch, module)
    assert main([a.format(run=run) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("mwperf: error: ")
    assert f"need {module}, which is not installed: install the extra '{extra}'" in err
    assert f"pip install -e 'python[{extra}]'" in err
    if module != "kaleido":  # report rewrites results.csv before it draws; the others make nothing
        assert sorted(p.name for p in run.iterdir()) == before


def test_the_duckdb_store_needs_no_pyarrow(run, tmp_path, monkeypatch):
    _without(monkeypatch, "pyarrow")
    store = tmp_path / "store.duckdb"
    assert main(["db", "ingest", str(run), "--db", str(store)]) == 0
    import mwperf

    frame = mwperf.load(db=str(store))
    assert len(frame) == len((FIXTURES / "results.jsonl").read_text().splitlines())
