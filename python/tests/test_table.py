"""The option table's rows as the controller reads them (:mod:`mwperf.table`):
a name that is a row of two commands (``--wait`` of ``run`` and of ``floor``,
``--cpus`` of ``wakeup`` and of ``floor``) is each command's own, and a list
row parses, checks and writes its items as its item kind says."""

import pytest

from mwperf.execute.floor import floor_argv
from mwperf.table import snapshot

FLOOR = snapshot().command("floor")


def test_a_name_is_each_commands_own_row():
    assert snapshot()["wait"].command == "run" and snapshot()["wait"].capability == "wait"
    assert FLOOR["wait"].command == "floor" and FLOOR["wait"].capability is None
    assert snapshot().command("wakeup")["cpus"].min == 0
    assert FLOOR["cpus"].min == -1 and FLOOR["cpus"].default == (-1, -1)
    assert "sizes" not in snapshot().command("run") and "sizes" in FLOOR
    assert all(not row.user for row in FLOOR.rows)  # no option of `mwperf run`


def test_a_list_parses_its_items_as_their_kind():
    sizes = FLOOR["sizes"]
    assert sizes.item == "bytes" and sizes.unit == "B" and sizes.items == (1, 256)
    assert sizes.parse("64,1k") == (64, 1024)
    assert sizes.argv((64, 1024)) == "64,1024"
    assert sizes.shown((64, 1024)) == "64,1KiB"
    for bad in ("0", "65MiB", "64,", "x"):
        with pytest.raises(ValueError):
            sizes.parse(bad)
    assert FLOOR["kinds"].parse("udp,shm") == ("udp", "shm")
    with pytest.raises(ValueError, match="memcpy, unix, udp, shm"):
        FLOOR["kinds"].parse("udp,tcp")
    assert FLOOR["cpus"].parse("-1,3") == (-1, 3)
    with pytest.raises(ValueError, match="2 comma-separated"):
        FLOOR["cpus"].parse("1,2,3")
    with pytest.raises(ValueError):
        snapshot().command("wakeup")["cpus"].parse("-1,3")


def test_the_floor_command_line_is_built_from_its_rows():
    assert floor_argv({"sizes": [64, 70000], "cpus": (-1, 1), "wait": "spin", "budget": 2_000_000,
                       "kinds": ("memcpy", "udp")}) == \
        ["floor", "--sizes", "64,70000", "--cpus", "-1,1", "--wait", "spin", "--budget", "2000000",
         "--kinds", "memcpy,udp"]
    with pytest.raises(KeyError):
        floor_argv({"duration": 5})  # a run option is none of floor's
    assert snapshot().argv("wakeup", {"cpus": (0, 1), "iterations": 100}) == \
        ["wakeup", "--cpus", "0,1", "--iterations", "100"]
