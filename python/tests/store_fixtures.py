"""The stores the store's tests run against: a DuckDB file and a real
PostgreSQL server (Debian's ``postgresql``) that the session starts itself.

The server is a throw-away cluster: ``initdb`` into a temporary folder as
the unprivileged ``postgres`` user (the suite runs as root, and PostgreSQL
refuses root), listening on a Unix socket in that folder only (no TCP), with
the session as its parent (``setpriv --pdeathsig``: it dies with the test
process). It is stopped and its folder removed at the end of the session;
the folder of a session that crashed is removed by the next one (a marker
names its owner's pid and start time; a server still running from it is
stopped first).

Without the server binaries the PostgreSQL tests FAIL, saying what to
install: they never skip (``make test`` installs the package).

The suite's conftest.py loads this module as a plugin (``pytest_plugins``):
``store_url`` and ``postgres_cluster`` are fixtures of every test, and the
server starts once a session, when a test first asks for it.
"""

from __future__ import annotations

import glob
import itertools
import json
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

PREFIX = "mwperf-pgtest-"
MARKER = "owner.json"
USER = "postgres"
_databases = itertools.count()


def _bindir() -> Path | None:
    found = shutil.which("initdb")
    if found and Path(found).resolve().with_name("postgres").is_file():
        return Path(found).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    return Path(versions[-1]).parent if versions else None


def _start_ticks(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return int(handle.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def _owner_alive(folder: Path) -> bool:
    try:
        owner = json.loads((folder / MARKER).read_text())
    except (OSError, ValueError):
        return False
    return _start_ticks(owner["pid"]) == owner["start"]


def _postmaster(folder: Path) -> int | None:
    """The pid of a server still running from ``folder``'s cluster, if any."""
    try:
        pid = int((folder / "data" / "postmaster.pid").read_text().split()[0])
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except (OSError, ValueError, IndexError):
        return None
    return pid if str(folder / "data").encode() in cmdline else None


def remove_stale_clusters() -> list[str]:
    """Folders (and servers) of sessions that crashed; never a live session's."""
    removed = []
    for name in glob.glob(os.path.join(tempfile.gettempdir(), PREFIX + "*")):
        folder = Path(name)
        if _owner_alive(folder):
            continue
        pid = _postmaster(folder)
        if pid is not None:
            os.kill(pid, signal.SIGQUIT)  # immediate shutdown of a server this suite started
            for _ in range(100):
                if _postmaster(folder) is None:
                    break
                time.sleep(0.05)
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(name)
    return removed


class Cluster:
    """A PostgreSQL server of the test session's own."""

    def __init__(self) -> None:
        self.bindir = _bindir()
        if self.bindir is None:
            pytest.fail("PostgreSQL server binaries (initdb, postgres) not found: install Debian's 'postgresql' "
                        "package (scripts/install-deps.sh does)", pytrace=False)
        try:
            self.user = pwd.getpwnam(USER)
        except KeyError:
            pytest.fail(f"no '{USER}' user: install Debian's 'postgresql' package", pytrace=False)
        remove_stale_clusters()
        self.folder = Path(tempfile.mkdtemp(prefix=PREFIX))
        (self.folder / MARKER).write_text(json.dumps({"pid": os.getpid(), "start": _start_ticks(os.getpid())}))
        os.chown(self.folder, self.user.pw_uid, self.user.pw_gid)
        self.process: subprocess.Popen | None = None

    def _as_user(self, *argv: str, pdeathsig: bool = False) -> list[str]:
        return ["setpriv", f"--reuid={self.user.pw_uid}", f"--regid={self.user.pw_gid}", "--init-groups",
                *(["--pdeathsig", "QUIT"] if pdeathsig else []), "--", *argv]

    def start(self) -> "Cluster":
        data = self.folder / "data"
        done = subprocess.run(self._as_user(str(self.bindir / "initdb"), "-D", str(data), "-U", USER, "-A", "trust",
                                            "--no-sync", "-E", "UTF8", "--locale=C"),
                              cwd=self.folder, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            pytest.fail(f"initdb failed: {done.stderr.strip()[-400:]}", pytrace=False)
        log = open(self.folder / "server.log", "wb")
        self.process = subprocess.Popen(
            self._as_user(str(self.bindir / "postgres"), "-D", str(data), "-k", str(self.folder),
                          "-c", "listen_addresses=", "-c", "fsync=off", "-c", "full_page_writes=off",
                          "-c", "synchronous_commit=off", pdeathsig=True),
            cwd=self.folder, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        deadline = time.monotonic() + 60
        while not (self.folder / ".s.PGSQL.5432").exists() or not self._ready():
            if self.process.poll() is not None or time.monotonic() > deadline:
                text = (self.folder / "server.log").read_text(errors="replace")[-600:]
                self.stop()
                pytest.fail(f"the test PostgreSQL server did not start: {text}", pytrace=False)
            time.sleep(0.1)
        return self

    def _ready(self) -> bool:
        done = subprocess.run([str(self.bindir / "pg_isready"), "-q", "-h", str(self.folder), "-U", USER],
                              capture_output=True)
        return done.returncode == 0

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{USER}@/{database}?host={self.folder}"

    def new_database(self) -> str:
        """A fresh, empty database; its URL."""
        import psycopg

        name = f"t{os.getpid()}_{next(_databases)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # fast shutdown
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_cluster():
    cluster = Cluster().start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(params=["duckdb", "postgresql"])
def store_url(request, tmp_path) -> str:
    """A new, empty store of each kind: the same test runs against both."""
    if request.param == "duckdb":
        return str(tmp_path / "store.duckdb")
    return request.getfixturevalue("postgres_cluster").new_database()
