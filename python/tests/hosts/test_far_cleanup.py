"""What a run leaves on a far host is cleaned there (mwperf.hosts.cleanup), as the ordinary user: an agent
whose ssh session is gone, never one whose session is alive; a segment nobody holds, never a held one; old
bundles beyond the newest few and dead installs' unpacking directories, never the bundle in use."""

import json
import subprocess
import sys
import time

import pytest

from far_fixtures import mwperf
from mwperf.hosts.bundles import read

# side by side: the lab is namespaces of its own (no interface, mount or address of the machine's), and no
# timing is asserted; its tests share one lab, on one worker
pytestmark = [pytest.mark.side_by_side, pytest.mark.xdist_group("far-hosts")]

CACHE = "/home/robot/.cache/mwperf/bundles"


def _clean(lab, target: str, agent: str, used: str) -> dict:
    code = ("import json, os, shlex\n"
            "from mwperf.hosts.cleanup import clean_far\n"
            "from mwperf.plan.where import SSH_OPTIONS\n"
            "from mwperf.execute.ssh import close_shared_connections\n"
            "opts = SSH_OPTIONS + tuple(shlex.split(os.environ['MWPERF_SSH_OPTIONS']))\n"
            f"left = clean_far({target!r}, opts, {CACHE!r}, {agent!r}, [{used!r}], ('fastrtps_*',))\n"
            "close_shared_connections()\n"
            "print(json.dumps(left.__dict__))\n")
    done = subprocess.run(lab.controller([sys.executable, "-c", code]), capture_output=True, text=True, timeout=120,
                          env=lab.env())
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _pids(host, seconds: int) -> list[str]:
    """The host's processes ``mwperf-agent SECONDS`` (the pattern does not match the pgrep's own shell)."""
    text = str(seconds)
    return host.run(f"pgrep -f 'mwperf-agent {text[:-1]}[{text[-1]}]'; true").stdout.split()


def test_a_far_hosts_leftovers_are_removed_and_what_is_in_use_is_kept(lab, fixture_bundles):
    x86 = lab.hosts["x86_64"]
    spec = f"pub={x86.target()},sub={lab.hosts['aarch64'].target()}"
    assert mwperf(lab, "hosts", "check", "--hosts", spec, "--bundles", str(fixture_bundles)).returncode == 0
    bundle = read(next(fixture_bundles.glob("*-x86_64-*")))
    agent = f"{CACHE}/{bundle.hash}/mwperf-agent"
    # an agent of a crashed run (its session gone: its parent is the host's PID 1), one of a live session
    x86.run(f"{agent} 301 >/dev/null 2>&1 &", user="robot")
    live = subprocess.Popen(lab.controller(["ssh", *lab.ssh_options().split(), x86.target(), agent, "302"]),
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # a segment nobody holds, one a process holds; old bundles and an install that died long ago
    x86.run("echo x > /dev/shm/fastrtps_stale; echo y > /dev/shm/fastrtps_held; "
            "sleep 303 3</dev/shm/fastrtps_held >/dev/null 2>&1 & "
            f"cd {CACHE} && for i in 1 2 3 4; do mkdir -p $(printf '%064d' $i); touch -d \"$i hours ago\" "
            f"$(printf '%064d' $i); done; mkdir .partial-x-old .partial-x-new && touch -d '2 hours ago' .partial-x-old",
            user="robot")
    try:
        deadline = time.monotonic() + 20
        while len(_pids(x86, 302)) < 1 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _pids(x86, 301) and _pids(x86, 302)
        left = _clean(lab, x86.target(), agent, bundle.hash)
        assert left["error"] is None
        assert len(left["killed"]) == 1 and left["killed"][0].endswith(agent)
        assert not _pids(x86, 301) and _pids(x86, 302)
        assert left["segments"] == ["fastrtps_stale"]
        assert x86.run("ls /dev/shm").stdout.split() == ["fastrtps_held"]
        # the bundle in use and the two newest others kept, the older two removed
        assert sorted(left["bundles"]) == [f"{3:064d}", f"{4:064d}"]
        kept = x86.run(f"ls -A {CACHE}", user="robot").stdout.split()
        assert sorted(kept) == sorted([bundle.hash, f"{1:064d}", f"{2:064d}", ".partial-x-new"])
        live.kill()  # the controller gone: its session ends, and its agent with it or at the next clean-up
        live.wait()
        time.sleep(0.5)
        _clean(lab, x86.target(), agent, bundle.hash)
        assert not _pids(x86, 302)
    finally:
        live.kill()
        x86.run("pkill -f 'mwperf-agent 30[12]'; pkill -f 'sleep 30[3]'; rm -rf /dev/shm/fastrtps_*; true")
