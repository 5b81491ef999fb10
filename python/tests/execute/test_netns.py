"""--link netns: two namespaces joined by a veth pair, shaped by a profile.
Needs root, ip, tc and nft (the suite's machine has them); skipped otherwise."""

import json
import os
import shutil
import signal
import subprocess
import sys

import pytest

from conftest import real_agent_path
from mwperf.execute.agent import describe
from mwperf.execute.baseline import iperf3
from mwperf.errors import UsageError
from mwperf.execute.netns import PREFIX, NetnsPair, remove_stale, stale_namespaces
from mwperf.plan.where import LinkProfile, parse_link
from conftest import written

ROOT = os.geteuid() == 0 and all(shutil.which(t) for t in ("ip", "tc", "nft"))
needs_root = pytest.mark.skipif(not ROOT, reason="needs root, ip, tc and nft")
pytestmark = pytest.mark.measuring  # namespaces, qdiscs, nftables, iperf3


def ours() -> list[str]:
    """mwperf's namespaces that are this test's: made by this process, or left by a controller that
    has exited (the mwperf runs this test started). A live controller's pair is another run's (a
    concurrent suite or session), not a leftover of this one."""
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    names = [l.split()[0] for l in out.splitlines() if l.startswith(PREFIX)]
    stale = set(stale_namespaces())
    return [n for n in names if n.startswith(f"{PREFIX}{os.getpid()}-") or n in stale]


@pytest.mark.parametrize("spec, expected", [
    ("netns", LinkProfile("none", None, 0.0)),
    ("netns:gige", LinkProfile("gige", 1000.0, 0.0)),
    ("netns:fast-ethernet", LinkProfile("fast-ethernet", 100.0, 0.0)),
    ("netns:wifi", LinkProfile("wifi", 60.0, 2.0)),
    ("netns:lossy:5%", LinkProfile("lossy:5%", None, 5.0)),
    ("netns:rate=250mbit,loss=1%", LinkProfile("rate=250mbit,loss=1%", 250.0, 1.0)),
])
def test_profiles(spec, expected):
    assert parse_link(spec) == expected


@pytest.mark.parametrize("spec, message", [
    ("wire", "--link wire: unknown link kind 'wire'"),
    ("netns:carrier-pigeon", "--link netns:carrier-pigeon: unknown profile 'carrier-pigeon'"),
    ("netns:lossy:150%", "--link netns:lossy:150%: loss 150%: must be between 0 and 100 %"),
    ("netns:rate=fast", "--link netns:rate=fast: rate fast: expected e.g. 100mbit or 1gbit"),
    ("netns:colour=red", "--link netns:colour=red: 'colour=red': expected rate=..."),
    ("netns:jitter=fast", "--link netns:jitter=fast: jitter fast: expected milliseconds"),
    # issue 45.7: accepted, and handed to tc as they were
    ("netns:delay=-5ms", "--link netns:delay=-5ms: delay -5ms: expected milliseconds, e.g. 2ms (duration must not"),
    ("netns:jitter=-1", "--link netns:jitter=-1: jitter -1: expected milliseconds"),
    ("netns:delay=nan", "--link netns:delay=nan: delay nan: expected milliseconds"),
    ("netns:delay=inf", "--link netns:delay=inf: delay inf: expected milliseconds"),
    ("netns:delay=1e400ms", "--link netns:delay=1e400ms: delay 1e400ms: expected milliseconds"),
    ("netns:delay=1h", "--link netns:delay=1h: delay 1h: must be at most 10s"),
    ("netns:gige,jitter=20s", "--link netns:gige,jitter=20s: jitter 20s: must be at most 10s"),
    ("netns:rate=0.001kbit", "--link netns:rate=0.001kbit: rate 0.001kbit: must be from 10kbit to 100gbit"),
    ("netns:rate=9999gbit", "--link netns:rate=9999gbit: rate 9999gbit: must be from 10kbit to 100gbit"),
    ("netns:loss=nan", "--link netns:loss=nan: loss nan: must be between 0 and 100 %"),
    ("netns:loss=-1%", "--link netns:loss=-1%: loss -1%: must be between 0 and 100 %"),
])
def test_bad_profiles(spec, message):
    with pytest.raises(UsageError) as err:
        parse_link(spec)
    assert str(err.value).startswith(message)


@pytest.mark.parametrize("spec, delay, jitter", [("netns:delay=5", 5.0, 0.0), ("netns:delay=2.5ms,jitter=500us", 2.5, 0.5),
                                                 ("netns:delay=1s,jitter=0", 1000.0, 0.0)])
def test_delays_by_the_command_lines_duration_parser(spec, delay, jitter):
    """A bare number is milliseconds (as before); any unit of the command line's durations is taken."""
    p = parse_link(spec)
    assert (p.delay_ms, p.jitter_ms) == (delay, jitter)


def test_a_plans_link_is_checked_by_the_same_parser(tmp_path):
    """The plan's link: key, and a discovery plan's, go through parse_link: a negative delay is refused there too."""
    from mwperf.errors import PlanError
    from mwperf.plan.discovery_plan import checked_lists

    given = {"mw": "cyclonedds", "participants": "2", "link": "netns:delay=-5ms"}
    with pytest.raises(PlanError, match="plans/x.yaml: link: netns:delay=-5ms: delay -5ms: expected milliseconds"):
        checked_lists(given, "plans/x.yaml")


@needs_root
def test_pair_is_created_and_removed():
    with NetnsPair(parse_link("netns:gige")) as pair:
        assert set(pair.ns) <= set(ours())
        qdisc = subprocess.run(["tc", "-n", pair.ns[0], "qdisc", "show", "dev", pair.ifname[0]],
                               capture_output=True, text=True).stdout
        assert "tbf" in qdisc and "1Gbit" in qdisc
        ping = subprocess.run(pair.exec_prefix("pub") + ["ip", "route", "get", pair.addr[1]], capture_output=True,
                              text=True)
        assert pair.ifname[0] in ping.stdout  # the sub's address is reached over the veth, inside the namespace
    assert not set(pair.ns) & set(ours())
    # and the host never got the 10.77 addresses
    assert "10.77." not in subprocess.run(["ip", "-4", "addr"], capture_output=True, text=True).stdout


@needs_root
def test_delay_is_refused_without_netem():
    profile = parse_link("netns:rate=100mbit,delay=2ms")
    probe = subprocess.run(["tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "0ms"], capture_output=True,
                           text=True)
    if probe.returncode == 0:
        subprocess.run(["tc", "qdisc", "del", "dev", "lo", "root"], capture_output=True)
        pytest.skip("this kernel has netem")
    with pytest.raises(UsageError, match=r"delay and jitter need netem, which this kernel does not have"):
        with NetnsPair(profile):
            pass
    assert ours() == []


@needs_root
def test_gige_profile_measured_by_iperf3():
    if shutil.which("iperf3") is None:
        pytest.skip("iperf3 is not installed")
    with NetnsPair(parse_link("netns:gige")) as pair:
        gbps = iperf3(pair, 3, udp=False)["gbps"]
    assert 0.9 <= gbps <= 1.1, gbps


def mwperf(*args, timeout=300):
    if args and args[0] == "run":  # the floor is not what this module checks (test_floor_* do)
        args = ("run", "--no-floor", *args[1:])
    return subprocess.run([sys.executable, "-m", "mwperf", *args], capture_output=True, text=True, timeout=timeout)


def udp_rate_point(tmp_path, link: str, rate: str, duration: str) -> dict:
    """The one record of a best-effort udp rate point over ``link``."""
    agent = real_agent_path()
    if agent is None:
        pytest.skip("the agent is not built")
    out = tmp_path / "run"
    done = mwperf("run", "--agent", str(agent), "--mw", "udp", "--mode", "rate", "--rate", rate, "--size", "256",
                  "--duration", duration, "--warmup", "100ms", "--link", link, "--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    (r,) = written(out)
    return r


@needs_root
@pytest.mark.e2e
def test_lossy_5_percent_measured_by_a_best_effort_udp_point(tmp_path):
    r = udp_rate_point(tmp_path, "netns:lossy:5%", "5000", "2s")
    assert r["link"] == {"kind": "netns", "profile": "lossy:5%", "rate_mbit": None, "loss_pct": 5.0, "delay_ms": 0.0,
                         "jitter_ms": 0.0, "clock_offset_s": 0}
    # the schedule is the test's (5 kHz x 2 s); a publisher late at the deadline on a busy
    # machine sends a few less, and says so (unsent)
    assert r["scheduled"] == 10000 and r["sent"] + r["unsent"] == 10000 and r["sent"] >= 9900
    assert 0.035 <= r["loss_rate"] <= 0.065  # the nftables rule's 5 %, the ground truth
    # both namespaces read one clock: the estimated offset must come out near zero
    clock = r["clock"]
    assert clock["same_clock"] and not clock["flagged"]
    assert abs(clock["offset_us"]) <= clock["uncertainty_us"] + 5 and clock["uncertainty_us"] < 1000
    assert ours() == []


@needs_root
@pytest.mark.e2e
def test_half_lost_point_completes_over_the_control_channel(tmp_path):
    r = udp_rate_point(tmp_path, "netns:lossy:50%", "1000", "1s")
    assert r["status"] == "ok" and 0.4 <= r["loss_rate"] <= 0.6
    assert ours() == []


@needs_root
@pytest.mark.e2e
def test_dds_stays_on_the_veth(tmp_path):
    agent = real_agent_path()
    if agent is None or not {"cyclonedds", "fastdds"} <= set(describe(str(agent)).adapters):
        pytest.skip("the agent is built without the DDS adapters")
    out = tmp_path / "run"
    done = mwperf("run", "--agent", str(agent), "--mw", "cyclonedds,fastdds", "--mode", "latency", "--size", "1k", "--duration", "1s", "--warmup", "200ms", "--link", "netns:gige",
                  "--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    cyclone, fast = written(out)
    for r in (cyclone, fast):
        assert r["status"] == "ok" and r["received"] == r["sent"]
    xml = cyclone["adapter"]["config"]["xml"]
    assert '<NetworkInterface name="mwa' in xml and "10.77." in xml  # the veth, the other side as peer
    assert fast["adapter"]["config"]["initial_peer"].startswith("10.77.")
    assert fast["adapter"]["config"]["isolated_namespace"] is True
    assert fast["transport"] == "udp"  # its default shm+udp would bypass the link


@needs_root
def test_leftovers_of_a_killed_run_are_removed():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        names = [f"{PREFIX}{child.pid}-a", f"{PREFIX}{child.pid}-b"]
        for name in names:
            subprocess.run(["ip", "netns", "add", name], check=True)
        assert stale_namespaces() == []  # its controller is alive: not stale
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert sorted(stale_namespaces()) == sorted(names)
    done = mwperf("doctor", "--cleanup", timeout=60)
    assert done.returncode == 0 and "removed 2 namespace(s): " in done.stdout
    assert all(name in done.stdout for name in names)
    assert ours() == [] and remove_stale() == []


@needs_root
def test_baseline_is_stored_and_shown_in_the_report(tmp_path):
    if shutil.which("iperf3") is None:
        pytest.skip("iperf3 is not installed")
    from conftest import FIXTURES
    from mwperf.results.rundir import RunDir

    rundir = RunDir(tmp_path).create()
    rundir.append(json.loads((FIXTURES / "results.jsonl").read_text().splitlines()[0]))
    done = mwperf("baseline", "--link", "netns:fast-ethernet", "--out", str(tmp_path), "--duration", "2s")
    assert done.returncode == 0, done.stderr
    doc = json.loads((tmp_path / "baseline.json").read_text())
    assert doc["link"]["profile"] == "fast-ethernet"
    assert 0.085 <= doc["tcp"]["gbps"] <= 0.105 and 0.085 <= doc["udp"]["gbps"] <= 0.105
    assert mwperf("report", str(tmp_path)).returncode == 0
    html = (tmp_path / "report.html").read_text()
    assert '<section id="baseline">' in html and f"{doc['tcp']['gbps']:.3f}" in html
    assert ours() == []
