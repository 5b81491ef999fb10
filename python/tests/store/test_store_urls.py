"""Store URLs and libpq keyword strings made to leak or litter (issue 37's
probe): ``postgresql://qa:pw@[::1/db`` was a traceback (urlsplit's "Invalid
IPv6 URL"); a keyword string ``host=127.0.0.1 password=S3cretPW dbname=x``
exited 0, made a DuckDB file of that name in the working directory and printed
the password. Every form: one line, exit 2, never the password, never a file.
Port 1 on loopback: nothing listens there, the connection is refused at once."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from mwperf.cli.main import main

SECRET = "S3cretPW"
STORES = [
    "postgresql://qa:pw@[::1/db",
    f"postgresql://qa:{SECRET}@[::1/db?password={SECRET}",
    f"postgresql://qa@127.0.0.1:1/db?password={SECRET}",
    f"postgresql://qa@127.0.0.1:1/db?sslmode=disable&PASSWORD={SECRET}",
    f"postgresql://qa:{SECRET}@127.0.0.1:1/db",
    "postgresql://qa:S3cret%50W@127.0.0.1:1/db",
    f"postgres://qa:{SECRET}@127.0.0.1:x/db",
    f"host=127.0.0.1 port=1 password={SECRET} dbname=x",
    f"host=127.0.0.1 port=1 password='{SECRET} x' dbname=x",
    f"host=127.0.0.1 port=1 passwd={SECRET}",  # a misspelt keyword: libpq refuses it, no file is made of it
    # issue 45.5: refused, but echoed with the password; the one-slash form made folders named after it
    f"mysql://qa:{SECRET}@127.0.0.1:1/db",
    f"postgresql+psycopg://qa:{SECRET}@127.0.0.1:1/db",
    f"postgresql:/qa:{SECRET}@127.0.0.1:1/db",
    f"postgresql:qa:{SECRET}@127.0.0.1:1/db",
    f"sqlite:///qa:{SECRET}@x/db?password={SECRET}",
]
COMMANDS = [["db", "ingest", "run"], ["db", "info"], ["history"], ["check", "--db", "{}", "budgets.yaml"]]


@pytest.mark.parametrize("store", STORES)
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_a_store_url_is_one_line_without_its_password_and_makes_no_file(tmp_path, monkeypatch, capsys, store,
                                                                        command):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MWPERF_DB", raising=False)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "results.jsonl").write_text((FIXTURES / "results.jsonl").read_text())
    (tmp_path / "budgets.yaml").write_text('budgets:\n  - p99: "<= 1s"\n')
    argv = [a.format(store) for a in command] + ([] if "{}" in command else ["--db", store])
    before = sorted(p.name for p in tmp_path.iterdir())
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert len(err.splitlines()) == 1 and err.startswith("mwperf: error: --db "), err
    assert SECRET not in out + err and "pw@" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before
