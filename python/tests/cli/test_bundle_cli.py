"""``mwperf bundle``: bad input is one line and exit 2, before anything is built."""

from __future__ import annotations

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
