"""The test PostgreSQL cluster's own clean-up: what a crashed session left is
removed by the next one, a live session's cluster never."""

import json
import os
import shutil
import subprocess
import tempfile

import store_fixtures
from store_fixtures import MARKER, PREFIX, remove_stale_clusters


def _folder(owner_pid: int, start) -> str:
    folder = tempfile.mkdtemp(prefix=PREFIX)
    with open(os.path.join(folder, MARKER), "w") as handle:
        json.dump({"pid": owner_pid, "start": start}, handle)
    return folder


def test_a_crashed_sessions_folder_goes_and_a_live_ones_stays():
    gone = subprocess.Popen(["true"])
    gone.wait()
    dead = _folder(gone.pid, 1)
    live = _folder(os.getpid(), store_fixtures._start_ticks(os.getpid()))
    try:
        removed = remove_stale_clusters()
        assert dead in removed and not os.path.exists(dead)
        assert live not in removed and os.path.isdir(live)
    finally:
        shutil.rmtree(live, ignore_errors=True)
