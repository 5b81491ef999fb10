"""A lab through Ansible (mwperf.lab): the project's playbook prepares a two-host inventory (the tests' far
hosts, far_hosts.py: an x86-64 and an emulated aarch64 board, nothing installed there, the ordinary user
robot), then `sweep --inventory` runs a plan over its pairs with the real bundles, one pair at a time: the
bundles --hosts finds in place are the ones the playbook installed (the records' phases say cached), every
record is tagged with its host pair. --tune as root changes a sysctl the test set low and puts it back at
the end; as robot (no sudo there) it is refused with the reason. Timing under emulation: none asserted."""

import json
import textwrap

import pytest

from far_fixtures import mwperf
from mwperf.model.schema import validate_record
from mwperf.results.rundir import read_records

pytestmark = [pytest.mark.side_by_side, pytest.mark.xdist_group("far-hosts-2")]

PLAN = """\
mw: udp
mode: rate
rate: 100
size: 1k
duration: 500ms
warmup: 100ms
"""


def inventory(lab, path, user: str = "robot", pi: str | None = None):
    """The lab's two hosts as an Ansible inventory (its YAML format); ``pi``: that host's address instead."""
    path.write_text(textwrap.dedent(f"""\
        all:
          vars:
            ansible_user: {user}
            ansible_ssh_private_key_file: {lab.key}
            ansible_ssh_common_args: -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR
          hosts:
            pc:
              ansible_host: {lab.hosts['x86_64'].addr}
            pi:
              ansible_host: {pi or lab.hosts['aarch64'].addr}
        """))
    return path


def test_a_host_no_bundle_runs_on_is_refused_before_anything_is_copied(lab, fixture_bundles, tmp_path):
    """The i686 address (an sshd under setarch i686): refused by name after the playbook's probe, one line, and
    the other host was given nothing."""
    lab.hosts["x86_64"].run("rm -rf /home/robot/lab-refused", user="robot")
    inv = inventory(lab, tmp_path / "lab.yml", pi=lab.hosts["x86_64"].i686_addr)
    done = mwperf(lab, "lab", "prepare", "--inventory", str(inv), "--bundles", str(fixture_bundles),
                  "--remote-dir", "lab-refused")
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith(f"mwperf: error: --inventory {inv}: host pi: architecture i686: mwperf makes no "
                                  f"bundle for it")
    assert lab.hosts["x86_64"].run("ls -A /home/robot/lab-refused", user="robot").stdout == ""


def test_the_playbook_prepares_the_lab_and_sweep_runs_the_plan_over_its_pairs(lab, bundles, tmp_path):
    for host in lab.hosts.values():
        host.run("rm -rf /home/robot/lab-sweep", user="robot")
    (tmp_path / "plan.yaml").write_text(PLAN)
    out = tmp_path / "run"
    done = mwperf(lab, "sweep", str(tmp_path / "plan.yaml"), "--inventory", str(inventory(lab, tmp_path / "lab.yml")),
                  "--pairs", "pc:pi,pi:pc", "--remote-dir", "lab-sweep", "--no-floor", "--db", "none",
                  "--out", str(out), timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    records = [r.json for r in read_records(out)]
    assert [r["host_pair"] for r in records] == ["pc:pi", "pi:pc"]
    assert len({r["point_key"] for r in records}) == 2
    for record in records:
        validate_record(record)
        assert record["status"] == "ok", record["error"]
        assert record["received"] + record["lost"] == record["sent"] and record["received"] > 0
        archs = (record["hosts"]["pub"]["arch"], record["hosts"]["sub"]["arch"])
        assert archs == (("x86_64", "aarch64") if record["host_pair"] == "pc:pi" else ("aarch64", "x86_64"))
        assert record["phases"]["bundle"] == {"pub": "cached", "sub": "cached"}  # the playbook put them there
    run = json.loads((out / "run.json").read_text())
    assert {name: h["state"] for name, h in run["lab"]["hosts"].items()} == {"pc": "copied", "pi": "copied"}
    assert set(run["host_pairs"]) == {"pc:pi", "pi:pc"}
    for host in lab.hosts.values():
        assert host.run("ls /home/robot/lab-sweep", user="robot").stdout.split() == \
            [run["lab"]["hosts"]["pc" if host is lab.hosts["x86_64"] else "pi"]["bundle"]]


def test_tune_as_root_is_put_back_and_refused_without_sudo(lab, fixture_bundles, tmp_path):
    arm = lab.hosts["aarch64"]
    arm.run("echo 30000 > /proc/sys/net/ipv4/ipfrag_low_thresh; echo 60000 > /proc/sys/net/ipv4/ipfrag_high_thresh")
    high = "cat /proc/sys/net/ipv4/ipfrag_high_thresh"
    try:
        done = mwperf(lab, "lab", "prepare", "--inventory", str(inventory(lab, tmp_path / "robot.yml")), "--tune",
                      "--bundles", str(fixture_bundles), "--remote-dir", "lab-tune")
        assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
        assert "host pc: tune failed: robot is not root and sudo is not installed" in done.stderr
        assert arm.run(high).stdout.strip() == "60000"

        root = str(inventory(lab, tmp_path / "root.yml", user="root"))
        done = mwperf(lab, "lab", "prepare", "--inventory", root, "--tune", "--bundles", str(fixture_bundles),
                      "--remote-dir", "lab-tune")
        assert done.returncode == 0, done.stderr
        assert "net.ipv4.ipfrag_high_thresh 60000 -> 134217728" in done.stdout
        assert arm.run(high).stdout.strip() == "134217728"
        done = mwperf(lab, "lab", "restore", "--inventory", root)
        assert done.returncode == 0, done.stderr
        assert arm.run(high).stdout.strip() == "60000"
    finally:
        arm.run("echo 4194304 > /proc/sys/net/ipv4/ipfrag_high_thresh; "
                "echo 3145728 > /proc/sys/net/ipv4/ipfrag_low_thresh; rm -rf /root/.cache/mwperf/tuned.sysctl")


def test_sweep_with_hosts_runs_the_plan_between_two_hosts(lab, bundles, tmp_path):
    """sweep --hosts: each host given its bundle as run --hosts does; no host_pair without a lab."""
    x86, arm = lab.hosts["x86_64"], lab.hosts["aarch64"]
    (tmp_path / "plan.yaml").write_text(PLAN)
    out = tmp_path / "run"
    done = mwperf(lab, "sweep", str(tmp_path / "plan.yaml"), "--hosts", f"pub={arm.target()},sub={x86.target()}",
                  "--remote-dir", "lab-sweep", "--no-floor", "--db", "none", "--out", str(out), timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    (record,) = [r.json for r in read_records(out)]
    validate_record(record)
    assert record["status"] == "ok" and record["received"] > 0 and record["host_pair"] is None
    assert (record["hosts"]["pub"]["arch"], record["hosts"]["sub"]["arch"]) == ("aarch64", "x86_64")
    assert json.loads((out / "run.json").read_text())["hosts"]["pub"]["arch"] == "aarch64"


def test_max_rate_with_hosts_searches_between_two_hosts(lab, bundles, tmp_path):
    """max-rate --hosts: each host given its bundle as run --hosts does, every probe between the two hosts (the
    rate found under emulation is not asserted)."""
    x86, arm = lab.hosts["x86_64"], lab.hosts["aarch64"]
    out = tmp_path / "search"
    done = mwperf(lab, "max-rate", "--mw", "udp", "--size", "1k", "--loss", "5%", "--rate", "200", "--bounds",
                  "100,400", "--step", "50%", "--duration", "300ms", "--warmup", "100ms", "--hosts",
                  f"pub={x86.target()},sub={arm.target()}", "--remote-dir", "lab-sweep", "--no-floor", "--db", "none",
                  "--out", str(out), timeout=600)
    assert done.returncode in (0, 1), done.stderr[-3000:]  # 1: no rate met the criterion (emulated: allowed)
    records = [r.json for r in read_records(out)]
    assert records and all(r["search"] is not None for r in records)
    for record in records:
        validate_record(record)
        assert (record["hosts"]["pub"]["arch"], record["hosts"]["sub"]["arch"]) == ("x86_64", "aarch64")
        assert record["sent"] > 0 and record["received"] + record["lost"] == record["sent"]
