"""--hosts puts the far side in place, on the tests' far hosts (far_hosts.py: an x86_64 and an aarch64
userland with sshd of their own, as the ordinary user robot): the bundle copied once, found the second
time; every refusal one line naming the host, exit 2, nothing made; two installs racing leave one good copy."""

import json
import subprocess
import sys

import pytest

from far_fixtures import make_bundle, mwperf
from mwperf.errors import UsageError
from mwperf.hosts.bundles import read
from mwperf.hosts.place import choose
from mwperf.hosts.probe import HostFacts

# side by side: the lab is namespaces of its own (no interface, mount or address of the machine's), and no
# timing is asserted; its tests share one lab, on one worker
pytestmark = [pytest.mark.side_by_side, pytest.mark.xdist_group("far-hosts-2")]


def _facts(**kw) -> HostFacts:
    base = dict(target="robot@h", arch="x86_64", glibc="2.36", dir="/home/robot/.cache/mwperf/bundles", writable=True,
                free_kb=1 << 30)
    return HostFacts(**{**base, **kw})


@pytest.mark.parametrize("facts, reason", [
    (dict(arch="armv7l"), "architecture armv7l: mwperf makes no bundle for it"),
    (dict(glibc="2.31"), "glibc 2.31 is older than the 2.34 the x86_64 bundle needs"),
    (dict(glibc=None), "the host does not say its glibc version"),
    (dict(writable=False, write_error="Read-only file system"), "cannot be written (Read-only file system)"),
    (dict(free_kb=100), "disk full: 100 KiB free"),
])
def test_choose_refuses_naming_the_host(fixture_bundles, facts, reason):
    with pytest.raises(UsageError) as err:
        choose(_facts(**facts), fixture_bundles)
    assert str(err.value).startswith("--hosts robot@h: ") and reason in str(err.value)


def test_choose_refuses_an_architecture_without_a_bundle_built(tmp_path):
    with pytest.raises(UsageError, match=r"no aarch64 bundle for this controller in .*mwperf bundle --arch aarch64"):
        choose(_facts(arch="aarch64"), tmp_path)


def test_a_cached_bundle_needs_no_room(fixture_bundles):
    bundle = read(sorted(fixture_bundles.glob("*x86_64*"))[0])
    assert choose(_facts(free_kb=1, installed={bundle.hash: bundle.manifest_sha256}), fixture_bundles) == bundle


def _sums(bundle) -> dict:
    """The bundle's files as `sha256sum -c` reads them, in $SUMS."""
    return {"SUMS": "\n".join(f"{d}  ./{p}" for p, d in sorted(bundle.files.items()))}


def _hosts(lab, sub: str) -> str:
    return f"pub={lab.hosts['x86_64'].target()},sub={sub}"


def test_check_copies_each_bundle_once_then_finds_it(lab, fixture_bundles):
    x86, arm = lab.hosts["x86_64"], lab.hosts["aarch64"]
    spec = _hosts(lab, arm.target())
    cache = "/home/robot/check-cache"  # a cache of this test's own (--remote-dir): the lab is the session's
    first = mwperf(lab, "hosts", "check", "--hosts", spec, "--bundles", str(fixture_bundles), "--remote-dir", cache)
    assert first.returncode == 0, first.stderr
    assert first.stderr.count(" copied ") == 2, first.stderr
    lines = first.stdout.splitlines()
    assert lines[0].startswith(f"{x86.target()}: x86_64, glibc 2.36, ") and lines[0].endswith("copied)")
    assert lines[1].startswith(f"{arm.target()}: aarch64, glibc 2.36, ")
    for host, arch in ((x86, "x86_64"), (arm, "aarch64")):
        bundle = read(next(fixture_bundles.glob(f"*-{arch}-*")))
        where = f"{cache}/{bundle.hash}"
        # checked on the host: every file as the manifest says, the user's own, nothing left unpacking
        done = host.run(f"cd {where} && printf '%s\\n' \"$SUMS\" | sha256sum -c --quiet --strict - && stat -c %U . "
                        f"&& ls -A ..", user="robot", env=_sums(bundle))
        assert done.stdout.split() == ["robot", bundle.hash], done.stdout
        # the ordinary user wrote in its home only
        assert [p for p in host.upper.rglob("*") if p.lstat().st_uid == 1000
                and not p.is_relative_to(host.upper / "home" / "robot")] == []
    second = mwperf(lab, "hosts", "check", "--hosts", spec, "--bundles", str(fixture_bundles), "--remote-dir", cache)
    assert second.returncode == 0 and "copied" not in second.stderr, second.stderr
    assert second.stdout.count("cached)") == 2


@pytest.mark.parametrize("who, reason", [
    ("robot@i686", "architecture i686: mwperf makes no bundle for it"),
    ("full", "disk full: 64 KiB free on /home/full, the x86_64 bundle needs"),
    ("ro", "/home/ro/refused-ro cannot be written (mkdir: cannot create directory '/home/ro/refused-ro': "
           "Read-only file system)"),
    ("glibc", "glibc 2.36 is older than the 2.99 the aarch64 bundle needs"),
])
def test_each_refusal_is_one_line_naming_the_host_exit_2_nothing_made(lab, fixture_bundles, tmp_path, who, reason):
    x86, arm = lab.hosts["x86_64"], lab.hosts["aarch64"]
    bundles, target = fixture_bundles, None
    if who == "robot@i686":
        target = f"robot@{x86.i686_addr}"
    elif who == "glibc":
        bundles, target = tmp_path / "new", arm.target()
        make_bundle(bundles, "aarch64", glibc_min="2.99", salt="new")
        make_bundle(bundles, "x86_64")
    else:
        target = x86.target(who)
    out = tmp_path / "run"
    commands = [["hosts", "check"]]
    if who == "full":  # a run refuses as the check does, before its run directory is made
        commands.append(["run", "--mw", "udp", "--duration", "100ms", "--out", str(out), "--no-floor"])
    for argv in commands:
        done = mwperf(lab, *argv, "--hosts", _hosts(lab, target), "--bundles", str(bundles), "--remote-dir",
                      f"refused-{who}")  # in each user's home
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith(f"mwperf: error: --hosts {target}: {reason}")
        assert len(done.stderr.splitlines()) == 1 and done.stdout == ""
        assert not out.exists()  # nothing measured half-way: not even the run directory
    if who == "glibc":  # refused before anything was copied to the other host either
        assert x86.run("ls -A /home/robot/refused-glibc", user="robot").stdout == ""


def test_two_controllers_installing_one_bundle_at_once_leave_one_good_copy(lab, fixture_bundles, tmp_path):
    """Both ask (neither finds it), then both copy at once: one installs, the other finds it installed
    meanwhile and removes its own; the copy is whole and no unpacking directory is left."""
    arm = lab.hosts["aarch64"]
    folder = tmp_path / "race"
    archive = make_bundle(folder, "aarch64", salt="race", payload=2 << 20)
    code = (
        "import json, sys, threading\n"
        "from pathlib import Path\n"
        "from mwperf.hosts.place import ask, choose, install\n"
        "from mwperf.plan.where import SSH_OPTIONS\n"
        "import shlex, os\n"
        "opts = SSH_OPTIONS + tuple(shlex.split(os.environ['MWPERF_SSH_OPTIONS']))\n"
        f"facts = [ask({arm.target()!r}, opts, None) for _ in range(2)]\n"
        f"bundles = [choose(f, Path({str(folder)!r})) for f in facts]\n"
        "states = [None, None]\n"
        "def go(i):\n"
        "    states[i] = install(facts[i], bundles[i], opts).state\n"
        "ts = [threading.Thread(target=go, args=(i,)) for i in range(2)]\n"
        "[t.start() for t in ts]; [t.join() for t in ts]\n"
        "from mwperf.execute.ssh import close_shared_connections; close_shared_connections()\n"
        "print(json.dumps(states))\n")
    done = subprocess.run(lab.controller([sys.executable, "-c", code]), capture_output=True, text=True, timeout=300,
                          env=lab.env())
    assert done.returncode == 0, done.stderr
    assert sorted(json.loads(done.stdout)) == ["copied", "raced"]
    bundle = read(archive)
    check = arm.run(f"cd /home/robot/.cache/mwperf/bundles && ls -A | grep -c partial; cd {bundle.hash} && "
                    "printf '%s\\n' \"$SUMS\" | sha256sum -c --quiet --strict - && echo whole", user="robot",
                    check=False, env=_sums(bundle))
    assert check.stdout.split() == ["0", "whole"], check.stdout + check.stderr
