"""``mwperf bundle``: bad input is one line and exit 2, before anything is built."""

from __future__ import annotations

from pathlib import Path

from mwperf.cli.main import main


def test_an_unknown_architecture_is_one_line(capsys):
    assert main(["bundle", "--arch", "sparc64"]) == 2
    err = capsys.readouterr().err
    assert err == "mwperf: error: --arch sparc64: one of x86_64, aarch64\n"


def test_an_output_folder_that_cannot_be_written_is_one_line(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert main(["bundle", "--arch", "x86_64", "--out", str(blocker / "bundles")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mwperf: error: --out {blocker / 'bundles'}: cannot write there") and err.count("\n") == 1


def test_the_architecture_is_required(capsys):
    assert main(["bundle"]) == 2
    assert "--arch" in capsys.readouterr().err


def test_a_full_file_system_is_one_line_and_leaves_nothing(tmp_path, capsys):
    """Issue 45.6: `mwperf bundle --out` on a full file system was a traceback (OSError ENOSPC from the
    stage). A 1 MiB tmpfs the test mounts (the bundle is tens of MB): exit 2, one line naming --out and the
    reason, and the file system as empty as it was (no stage, no partial archive, no cache file)."""
    import os
    import shutil
    import subprocess

    import pytest

    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root to mount a tmpfs")
    if not (Path(__file__).resolve().parents[3] / "agent" / "build" / "mwperf-agent").is_file():
        pytest.skip("the agent is not built (agent/build)")
    full = tmp_path / "full"
    full.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "mwperf-test-full", str(full)], check=True)
    try:
        assert main(["bundle", "--arch", "x86_64", "--out", str(full), "--rebuild"]) == 2
        err = capsys.readouterr().err
        assert err.splitlines()[-1] == (f"mwperf: error: --out {full}: cannot write there (No space left on "
                                        f"device); nothing of this bundle is left there"), err
        assert "Traceback" not in err and list(full.iterdir()) == []
    finally:
        subprocess.run(["umount", str(full)], check=True)
