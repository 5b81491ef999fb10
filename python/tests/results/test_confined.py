"""Writing into a run directory never follows a link out of it
(mwperf.results.confined): a link planted where a file, a temporary or a
folder goes is replaced or refused in one line, and what it points to is
never written; an error never shows a foreign file's content."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES
from mwperf.errors import StorageError
from mwperf.results.confined import write_inside
from mwperf.results.rundir import RunDir, write_atomic

PRECIOUS = "root:$y$j9T$SECRETHASH:19000:0:99999:7:::\n"


def mwperf(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mwperf", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


@pytest.fixture
def victim(tmp_path) -> Path:
    path = tmp_path / "victim"
    path.write_text(PRECIOUS)
    return path


@pytest.fixture
def run(tmp_path) -> Path:
    """A run directory holding the fixture records."""
    path = tmp_path / "run"
    path.mkdir()
    shutil.copy(FIXTURES / "results.jsonl", path / "results.jsonl")
    return path


def one_error_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("mwperf: error: ")]
    assert len(errors) == 1, done.stderr
    assert "SECRETHASH" not in done.stdout + done.stderr
    return errors[0]


def test_export_parquet_replaces_a_planted_link_and_leaves_its_target_alone(run, victim):
    (run / "results.parquet").symlink_to(victim)
    done = mwperf("export", str(run), "--format", "parquet")
    assert done.returncode == 0, done.stderr
    assert victim.read_text() == PRECIOUS
    assert not (run / "results.parquet").is_symlink()
    assert (run / "results.parquet").read_bytes()[:4] == b"PAR1"


@pytest.mark.parametrize("name", ["run.json", "run.json.tmp", "results.csv.tmp"])
def test_an_atomic_write_never_writes_through_a_link(tmp_path, victim, name):
    (tmp_path / name).symlink_to(victim)
    write_atomic(tmp_path / name.removesuffix(".tmp"), "{}\n")
    assert victim.read_text() == PRECIOUS
    assert (tmp_path / name.removesuffix(".tmp")).read_text() == "{}\n"
    assert not (tmp_path / name.removesuffix(".tmp")).is_symlink()
    assert not (tmp_path / (name.removesuffix(".tmp") + ".tmp")).exists()


@pytest.mark.parametrize("args, folder", [
    (("export", "{run}", "--format", "perftest-csv"), "perftest"),
    (("report", "{run}", "--format", "svg"), "plots"),
])
def test_a_linked_folder_is_refused_in_one_line(run, tmp_path, args, folder):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (run / folder).symlink_to(elsewhere)
    error = one_error_line(mwperf(*(a.format(run=run) for a in args)))
    assert error == f"mwperf: error: {run / folder}: cannot write: a symbolic link: mwperf writes nothing through a link"
    assert list(elsewhere.iterdir()) == []


def test_write_inside_refuses_a_linked_folder(tmp_path):
    (tmp_path / "plots").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "elsewhere").mkdir()
    with pytest.raises(StorageError, match="a symbolic link"):
        write_inside(tmp_path, "plots/a.svg", "<svg/>")
    assert list((tmp_path / "elsewhere").iterdir()) == []


def linked_samples(tmp_path: Path) -> tuple[Path, Path]:
    """(a run directory whose samples folder links to an empty folder, that folder)."""
    elsewhere, run = tmp_path / "elsewhere", tmp_path / "run"
    elsewhere.mkdir()
    run.mkdir()
    (run / "samples").symlink_to(elsewhere)
    return run, elsewhere


def test_a_linked_samples_folder_or_results_jsonl_refuses_the_run(tmp_path, victim):
    linked, elsewhere = linked_samples(tmp_path)
    with pytest.raises(StorageError, match="a symbolic link"):
        RunDir(linked).create(samples=True)
    linked_jsonl = tmp_path / "b"
    linked_jsonl.mkdir()
    (linked_jsonl / "results.jsonl").symlink_to(victim)
    with pytest.raises(StorageError, match="a symbolic link"):
        RunDir(linked_jsonl).create()
    with pytest.raises(StorageError, match="a symbolic link"):
        RunDir(linked_jsonl).append(json.loads((FIXTURES / "results.jsonl").read_text().splitlines()[0]))
    assert victim.read_text() == PRECIOUS
    assert list(elsewhere.iterdir()) == []


def test_a_run_into_a_directory_with_a_linked_samples_folder_is_refused(tmp_path, fake_agent):
    out, elsewhere = linked_samples(tmp_path)
    error = one_error_line(mwperf("run", "--mw", "udp", "--size", "32", "--duration", "100ms", "--warmup", "0",
                                  "--agent", str(fake_agent), "--out", str(out)))
    assert "samples: cannot write: a symbolic link" in error
    assert list(elsewhere.iterdir()) == []


def test_resume_refuses_a_linked_results_jsonl_and_never_shows_a_linked_plan(tmp_path, victim, fake_agent):
    run = tmp_path / "run"
    run.mkdir()
    (run / "plan.yaml").write_text("mw: udp\nsize: 32\nduration: 100ms\nwarmup: 0s\n")
    (run / "results.jsonl").symlink_to(victim)
    error = one_error_line(mwperf("sweep", "--resume", str(run), "--agent", str(fake_agent)))
    assert error.endswith("results.jsonl: cannot write: a symbolic link: mwperf writes nothing through a link")
    (run / "results.jsonl").unlink()
    (run / "plan.yaml").unlink()
    (run / "plan.yaml").symlink_to(victim)
    error = one_error_line(mwperf("sweep", "--resume", str(run), "--agent", str(fake_agent)))
    assert error == f"mwperf: error: --resume {run}: plan.yaml leads outside the run directory"
    assert victim.read_text() == PRECIOUS
    assert sorted(p.name for p in run.iterdir()) == ["plan.yaml"]


@contextlib.contextmanager
def read_only_folder(tmp_path: Path):
    """A folder not even root can write: a read-only bind mount (root only)."""
    if os.geteuid() != 0:
        pytest.skip("mounting needs root")
    source, target = tmp_path / "source", tmp_path / "read-only"
    source.mkdir(exist_ok=True)
    target.mkdir()
    subprocess.run(["mount", "--bind", "-o", "ro", str(source), str(target)], check=True, capture_output=True)
    try:
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], capture_output=True)


@pytest.mark.parametrize("fmt", ["parquet", "perftest-csv"])
def test_export_into_a_folder_that_cannot_be_written_is_one_line(run, tmp_path, fmt):
    with read_only_folder(tmp_path) as folder:
        error = one_error_line(mwperf("export", str(run), "--format", fmt, "--out", str(folder)))
        assert error.endswith("cannot write: Read-only file system")
        assert list(folder.iterdir()) == []


def test_figure_files_into_a_run_directory_that_cannot_be_written_is_one_line(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    shutil.copy(FIXTURES / "results.jsonl", source / "results.jsonl")
    with read_only_folder(tmp_path) as folder:
        error = one_error_line(mwperf("report", str(folder), "--format", "svg"))
        assert error == f"mwperf: error: {folder / 'plots'}: cannot write: Read-only file system"
