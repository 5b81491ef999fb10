"""Shared-memory clean-up with fake segments in a temporary directory.

The references come from the real /proc: this test process holds one fake
segment open and maps another, as a live middleware process would."""

import fcntl
import mmap
import os

import pytest

from conftest import described, write_script
from mwperf.execute import cleanup
from mwperf.execute.cleanup import clean_shm, fastdds_shm_clean, referenced_paths, shm_patterns, stale_segments

#: What the recorded agent's adapters say they may leave in /dev/shm (their description, not a list of ours).
PATTERNS = shm_patterns(described().leftovers)


@pytest.fixture
def shm(tmp_path):
    directory = tmp_path / "shm"
    directory.mkdir()
    for name in ("fastrtps_dead", "fastrtps_dead_el", "sem.fastrtps_port7411_mutex", "fast_datasharing_01.0f_2",
                 "fastrtps_open", "fastrtps_mapped", "iox_roudi", "my_zenoh_seg", "unrelated"):
        (directory / name).write_bytes(b"\0" * 4096)
    return directory


def test_only_unreferenced_segments_go(shm):
    if not referenced_paths()[1]:
        pytest.skip("some process of this host cannot be inspected (not root): nothing would be removed")
    held = open(shm / "fastrtps_open", "rb")
    with open(shm / "fastrtps_mapped", "r+b") as handle:
        mapped = mmap.mmap(handle.fileno(), 4096)  # the fd is closed below; only the mapping remains
    try:
        removed = clean_shm(PATTERNS, shm, use_fastdds=False, min_age_s=0)
        assert sorted(removed) == ["fast_datasharing_01.0f_2", "fastrtps_dead", "fastrtps_dead_el",
                                   "sem.fastrtps_port7411_mutex"]
        assert sorted(os.listdir(shm)) == ["fastrtps_mapped", "fastrtps_open", "iox_roudi", "my_zenoh_seg",
                                           "unrelated"]
    finally:
        mapped.close()
        held.close()
    # nobody uses them any more: the next clean-up takes them
    assert sorted(clean_shm(PATTERNS, shm, use_fastdds=False, min_age_s=0)) == ["fastrtps_mapped", "fastrtps_open"]
    assert sorted(os.listdir(shm)) == ["iox_roudi", "my_zenoh_seg", "unrelated"]


def test_young_segments_whose_owner_is_gone_go(shm, tmp_path):
    """Age is no guide (a zenoh point shorter than a second left its segments
    until the next run): a segment just made, that no process holds, goes."""
    proc = tmp_path / "proc"  # no process at all: nothing holds them
    proc.mkdir()
    assert len(stale_segments(PATTERNS, shm, proc, min_age_s=3600)) == 6
    zenoh = shm / "12345678901234.zenoh"
    zenoh.write_bytes(b"\0" * 4096)
    assert clean_shm(("*.zenoh",), shm, proc, use_fastdds=False, min_age_s=3600) == [zenoh.name]


def test_a_locked_segment_stays(shm, tmp_path):
    """zenoh's holders keep a shared flock on a segment while they map it:
    a lock held is a live owner, whatever /proc shows (here: nothing)."""
    proc = tmp_path / "proc"
    proc.mkdir()
    zenoh = shm / "98765.zenoh"
    zenoh.write_bytes(b"\0" * 4096)
    with open(zenoh, "rb") as holder:
        fcntl.flock(holder.fileno(), fcntl.LOCK_SH)
        assert clean_shm(("*.zenoh",), shm, proc, use_fastdds=False) == []
        assert zenoh.exists()
    assert clean_shm(("*.zenoh",), shm, proc, use_fastdds=False) == [zenoh.name]


@pytest.mark.skipif(os.geteuid() == 0, reason="root opens any file: the fallback is for files this user cannot open")
def test_a_file_that_cannot_be_opened_waits_for_its_age(tmp_path):
    proc = tmp_path / "proc"
    proc.mkdir()
    (tmp_path / "1.zenoh").write_bytes(b"")
    (tmp_path / "1.zenoh").chmod(0)  # as iceoryx2 makes its segments while it sets them up
    assert clean_shm(("*.zenoh",), tmp_path, proc, use_fastdds=False, min_age_s=3600) == []
    assert clean_shm(("*.zenoh",), tmp_path, proc, use_fastdds=False, min_age_s=0) == ["1.zenoh"]


def test_a_replaced_segment_is_not_removed(tmp_path, monkeypatch):
    """The name is unlinked only while it names the file that was locked."""
    seg = tmp_path / "7.zenoh"
    seg.write_bytes(b"x")
    real_flock = fcntl.flock

    def flock_then_replace(fd, op):
        real_flock(fd, op)
        seg.unlink()
        seg.write_bytes(b"new")  # another file under the name meanwhile

    monkeypatch.setattr(cleanup.fcntl, "flock", flock_then_replace)
    assert cleanup._remove_unlocked(seg) is False
    assert seg.read_bytes() == b"new"


def test_nothing_goes_when_a_process_cannot_be_inspected(shm, tmp_path):
    proc = tmp_path / "proc"
    (proc / "4242").mkdir(parents=True)
    (proc / "4242" / "fd").write_text("not a directory: like a process of another user")
    paths, complete = referenced_paths(proc)
    assert not complete
    assert stale_segments(PATTERNS, shm, proc, min_age_s=0) == []
    assert len(os.listdir(shm)) == 9


def test_maps_parsing():
    text = ("7f00-7f10 rw-s 00000000 00:1a 12 /dev/shm/fastrtps_abc\n"
            "7f10-7f20 rw-s 00000000 00:1a 13 /dev/shm/fast_datasharing_x (deleted)\n"
            "7f20-7f30 r-xp 00000000 00:00 0 \n"
            "7f30-7f40 rw-p 00000000 00:00 0 [heap]\n")
    assert cleanup._maps_paths(text) == {"/dev/shm/fastrtps_abc", "/dev/shm/fast_datasharing_x"}


def test_real_proc_sees_this_process(tmp_path):
    path = tmp_path / "held"
    path.write_text("x")
    with open(path):
        paths, _ = referenced_paths()
        assert str(path) in paths


def test_missing_directory_is_fine(tmp_path):
    assert clean_shm(PATTERNS, tmp_path / "nowhere", use_fastdds=False) == []


def test_fastdds_tool(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert fastdds_shm_clean() is False  # not installed
    log = tmp_path / "calls"
    write_script(tmp_path / "fastdds", f'#!/bin/sh\necho "$@" >> "{log}"\n')
    assert fastdds_shm_clean() is True
    assert log.read_text() == "shm clean\n"


def test_fastdds_tool_only_for_dev_shm(tmp_path, monkeypatch, shm):
    calls = []
    monkeypatch.setattr(cleanup, "fastdds_shm_clean", lambda: calls.append(1) or True)
    clean_shm(PATTERNS, shm, min_age_s=3600)
    assert calls == []


def test_fastdds_tool_only_when_fast_dds_left_something(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(cleanup, "fastdds_shm_clean", lambda: calls.append(1) or True)
    monkeypatch.setattr(cleanup, "SHM_DIR", tmp_path)
    (tmp_path / "iox_roudi").write_bytes(b"")
    clean_shm(PATTERNS, tmp_path, min_age_s=3600)
    assert calls == []  # nothing of Fast DDS's: its tool (~0.3 s) is not run
    (tmp_path / "sem.fastrtps_port7412_mutex").write_bytes(b"")
    clean_shm(PATTERNS, tmp_path, min_age_s=3600)
    assert calls == [1]


def test_lttng_wait_segments_that_ros2_left_go(tmp_path):
    """ROS 2's tracing library (loaded with rcl) creates LTTng-UST's wait
    segments at the agent's start; unreferenced, they go with the rest."""
    if not referenced_paths()[1]:
        pytest.skip("some process of this host cannot be inspected (not root): nothing would be removed")
    for name in ("lttng-ust-wait-8", "lttng-ust-wait-8-0", "lttng-other"):
        (tmp_path / name).write_bytes(b"\0" * 4096)
    assert sorted(clean_shm(PATTERNS, tmp_path, use_fastdds=False, min_age_s=0)) == ["lttng-ust-wait-8", "lttng-ust-wait-8-0"]
    assert os.listdir(tmp_path) == ["lttng-other"]


def fake_proc(tmp_path, *programs: str):
    proc = tmp_path / "proc"
    for pid, program in enumerate(programs, 100):
        (proc / str(pid)).mkdir(parents=True)
        (proc / str(pid) / "comm").write_text("mwperf-main\n" if program.endswith("mwperf-agent") else program + "\n")
        (proc / str(pid) / "cmdline").write_bytes(program.encode() + b"\0run\0")
    proc.mkdir(exist_ok=True)
    return proc


def test_what_killed_agents_left_in_tmp_goes_once_no_agent_runs(tmp_path):
    """A killed ros2 agent leaves its Fast DDS profile (/tmp/mwperf-ros2-*), a
    killed iceoryx2 one its root folder: both go, but not while an agent runs
    (its own), and never another user's or through a link."""
    from mwperf.execute.cleanup import clean_agent_files

    tmp = tmp_path / "tmp"
    mine = (str(tmp / "mwperf-iceoryx2"), str(tmp / "mwperf-ros2-*"), "/dev/shm/fastrtps_*")  # as adapters say
    tmp.mkdir()
    (tmp / "mwperf-ros2-a1B2c3").write_text("<dds/>")
    (tmp / "mwperf-iceoryx2" / "services").mkdir(parents=True)
    (tmp / "elsewhere").mkdir()
    (tmp / "elsewhere" / "keep").write_text("x")
    (tmp / "mwperf-ros2-link").symlink_to(tmp / "elsewhere")
    (tmp / "mwperf-other").write_text("x")
    # an agent runs: the files no process holds go (a live ros2 agent holds its profile), the folder stays
    assert clean_agent_files(mine, fake_proc(tmp_path / "busy", "bash", "mwperf-agent")) == [
        str(tmp / n) for n in ("mwperf-ros2-a1B2c3", "mwperf-ros2-link")]
    assert clean_agent_files(mine, fake_proc(tmp_path / "idle", "bash")) == [str(tmp / "mwperf-iceoryx2")]
    assert sorted(os.listdir(tmp)) == ["elsewhere", "mwperf-other"]
    assert (tmp / "elsewhere" / "keep").exists()
    if os.geteuid() == 0:
        (tmp / "mwperf-ros2-theirs").write_text("x")
        os.chown(tmp / "mwperf-ros2-theirs", 65534, 65534)
        assert clean_agent_files(mine, fake_proc(tmp_path / "idle2", "bash")) == []


def test_the_agent_cleans_what_its_adapters_know(tmp_path):
    """``mwperf-agent cleanup`` lines become ``mw: what`` (an agent that lacks
    the command, or none at all, cleans nothing and fails nothing)."""
    agent = write_script(tmp_path / "agent", "#!/bin/sh\n[ \"$1\" = cleanup ] || exit 2\n"
                         "echo '{\"event\":\"cleaned\",\"mw\":\"udp\",\"removed\":[]}'\n"
                         "echo 'not json'\n"
                         "echo '{\"event\":\"cleaned\",\"mw\":\"connext\",\"removed\":[\"shm 0x004023c8\",\"sem 0x008023c8\"]}'\n")
    assert cleanup.agent_clean_stale(str(agent)) == ["connext: shm 0x004023c8", "connext: sem 0x008023c8"]
    old = write_script(tmp_path / "old", "#!/bin/sh\necho \"unknown command '$1'\" >&2\nexit 2\n")
    assert cleanup.agent_clean_stale(str(old)) == []
    assert cleanup.agent_clean_stale(None) == [] and cleanup.agent_clean_stale(str(tmp_path / "missing")) == []


def test_a_profile_a_live_agent_holds_open_stays(tmp_path):
    """A ros2 agent holds its Fast DDS profile open while it runs: kept, the
    one a killed agent left goes (real /proc: this process holds the file)."""
    from mwperf.execute.cleanup import clean_agent_files

    if not referenced_paths()[1]:
        pytest.skip("some process of this host cannot be inspected (not root): nothing would be removed")
    live, dead = tmp_path / "mwperf-ros2-live", tmp_path / "mwperf-ros2-dead"
    live.write_text("<dds/>")
    dead.write_text("<dds/>")
    with open(live):
        assert clean_agent_files((str(tmp_path / "mwperf-ros2-*"),)) == [str(dead)]
    assert live.exists() and not dead.exists()


@pytest.mark.parametrize("argv0, kept", [
    ("/opt/mwperf/agent/build/mwperf-agent", True),        # its main thread is named mwperf-main
    ("/opt/mwperf/agent/build/mwperf-agent-ros2", True),
    ("agent/build/mwperf_agent_tests", True),               # the adapters' unit tests (comm cut to 15 chars)
    ("/usr/bin/python3", False),
])
def test_iceoryx2_files_stay_while_an_agent_runs(tmp_path, argv0, kept):
    from mwperf.execute.cleanup import clean_agent_files

    root, proc = tmp_path / "mwperf-iceoryx2", tmp_path / "proc"
    (root / "services").mkdir(parents=True)
    (proc / "4242").mkdir(parents=True)
    (proc / "4242" / "comm").write_text("mwperf-main\n")
    (proc / "4242" / "cmdline").write_bytes(argv0.encode() + b"\0run\0--mw\0iceoryx2\0")
    removed = clean_agent_files((str(root),), proc)
    assert root.exists() == kept and (removed == []) == kept


def test_the_notices_leave_the_middlewares_own_tracing_segments_to_verbose():
    from mwperf.execute.cleanup import Leftovers, notices

    only_tracing = Leftovers([], ["lttng-ust-wait-6", "lttng-ust-wait-6-0"], [])
    assert notices(only_tracing, "after the run") == []
    assert notices(only_tracing, "after the run", verbose=True) == [
        "mwperf: removed 2 stale shared-memory segment(s) after the run: lttng-ust-wait-6, lttng-ust-wait-6-0"]
    other = Leftovers(["mwperf-1-pub"], ["lttng-ust-wait-6", "iox2_x\x1b[31m"], ["roudi"])
    assert notices(other, "before the run") == [
        "mwperf: removed 1 namespace(s) left by a crashed run: mwperf-1-pub",
        "mwperf: removed what 1 service(s) of a crashed run left: roudi",
        "mwperf: removed 1 stale shared-memory segment(s) before the run: iox2_x\\x1b[31m"]


def test_the_segments_notice_is_one_line_of_at_most_100_columns():
    from mwperf.execute.cleanup import Leftovers, notices

    # what the quick plan's run removed after it on this machine: zenoh's segments of its agents
    names = ["1919751884.zenoh", "2262580927.zenoh", "2795711348.zenoh", "32223.zenoh", "3270862355.zenoh",
             "3501.zenoh", "3990.zenoh", "4011.zenoh", "4242.zenoh"]
    (line,) = notices(Leftovers([], names, []), "after the run")
    assert line == "mwperf: removed 9 stale shared-memory segment(s) after the run: 3501.zenoh, 3990.zenoh, ..."
    assert len(line) <= 100
    (every,) = notices(Leftovers([], names, []), "after the run", verbose=True)
    assert every.endswith(": " + ", ".join(names))
    (one,) = notices(Leftovers([], ["3501.zenoh"], []), "after the run")
    assert one == "mwperf: removed 1 stale shared-memory segment(s) after the run: 3501.zenoh"
