"""Every record of a two-host point says what each side's host is, as that host said it (not the
controller): its architecture, sysctls and sync daemons as the test set them there; a host whose reassembly
memory is smaller than the samples asked is warned about before the first point, the sysctl named."""

import json

import pytest

from far_fixtures import mwperf
from mwperf.results.rundir import read_records

# side by side: the lab is namespaces of its own (no interface, mount or address of the machine's), and no
# timing is asserted; its tests share one lab, on one worker
pytestmark = [pytest.mark.side_by_side, pytest.mark.xdist_group("far-hosts")]


def test_records_say_what_each_host_is_and_small_buffers_are_warned_about(lab, fixture_bundles, tmp_path):
    x86, arm = lab.hosts["x86_64"], lab.hosts["aarch64"]
    arm.run("echo 30000 > /proc/sys/net/ipv4/ipfrag_low_thresh; echo 60000 > /proc/sys/net/ipv4/ipfrag_high_thresh; "
            "cp /bin/sleep /tmp/phc2sys && (/tmp/phc2sys 300 >/dev/null 2>&1 &)")
    try:
        out = tmp_path / "run"
        done = mwperf(lab, "run", "--hosts", f"pub={x86.target()},sub={arm.target()}", "--bundles",
                      str(fixture_bundles), "--mw", "udp", "--size", "64000", "--duration", "100ms", "--no-floor",
                      "--out", str(out))
    finally:
        arm.run("echo 4194304 > /proc/sys/net/ipv4/ipfrag_high_thresh; "
                "echo 3145728 > /proc/sys/net/ipv4/ipfrag_low_thresh; pkill -x phc2sys; true")
    warning = (f"mwperf: warning: {arm.target()}: net.ipv4.ipfrag_high_thresh = 60000 (60000) is smaller than the "
               f"64000 samples asked")
    lines = done.stderr.splitlines()
    warned = [i for i, line in enumerate(lines) if line.startswith(warning)]
    first_point = next(i for i, line in enumerate(lines) if "[1/1]" in line)
    assert len(warned) == 1 and warned[0] < first_point, done.stderr  # once, before measuring
    assert f"warning: {x86.target()}:" not in done.stderr  # its own value is the default 4 MiB
    records = [r.json for r in read_records(out)]
    assert len(records) == 1
    for record in records:
        pub, sub = record["hosts"]["pub"], record["hosts"]["sub"]
        assert (pub["arch"], sub["arch"]) == ("x86_64", "aarch64")
        assert (pub["target"], sub["target"]) == (x86.target(), arm.target())
        assert sub["sysctl"]["net.ipv4.ipfrag_high_thresh"] == 60000
        assert pub["sysctl"]["net.ipv4.ipfrag_high_thresh"] == 4194304
        assert (pub["sync"]["phc2sys"], sub["sync"]["phc2sys"]) == (False, True)
        for side in (pub, sub):
            assert side["nic"]["name"] == "eth0" and side["nic"]["mtu"] == 1500
            assert side["cpus"] >= 1 and side["kernel"] and side["glibc"] == "2.36"
            assert side["bundle"]["state"] in ("cached", "copied")
        assert record["phases"]["bundle"] == {"pub": pub["bundle"]["phase"], "sub": sub["bundle"]["phase"]}
    assert json.loads((out / "run.json").read_text())["hosts"]["sub"]["arch"] == "aarch64"
