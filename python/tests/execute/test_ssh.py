"""--hosts over ssh, for real: two sshd (Debian openssh-server) in two network
namespaces with a key the test generates; the controller runs in the first
namespace, so 10.77.x addresses never exist outside them."""

import os
import re
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import real_agent_path
from mwperf.errors import UsageError
from mwperf.execute.netns import NetnsPair
from mwperf.execute.ssh import SshHosts, close_shared_connections
from mwperf.plan.where import parse_hosts, parse_link
from conftest import written

SSHD = "/usr/sbin/sshd"
ROOT = os.geteuid() == 0 and all(shutil.which(t) for t in ("ip", "tc", "nft", "ssh", "ssh-keygen"))


def test_remote_command_is_quoted_argument_by_argument():
    hosts = SshHosts(parse_hosts("pub=root@10.1.0.1,sub=alice@10.1.0.2", ssh_options=("-o", "BatchMode=yes")))
    try:
        argv = hosts.wrap("pub", ["/opt/mw perf/agent", "run", "--mode", "rate;reboot"])
        assert argv[:3] == ["ssh", "-o", "BatchMode=yes"] and argv[-3:-1] == ["root@10.1.0.1", "--"]
        assert argv[-1] == "'/opt/mw perf/agent' run --mode 'rate;reboot' --host 10.1.0.2 --peer 10.1.0.2"
        assert hosts.wrap("sub", ["a"])[-1] == "a --host 10.1.0.2 --peer 10.1.0.1"
    finally:
        close_shared_connections()


def test_sessions_share_a_connection_in_a_private_directory_removed_at_the_end():
    hosts = SshHosts(parse_hosts("pub=root@10.1.0.1,sub=alice@10.1.0.2", ssh_options=("-o", "BatchMode=yes")))
    try:
        options = hosts.command("pub", ["true"])[3:-3]
        assert options[:2] == ["-o", "ControlMaster=auto"] and "ControlPersist=30" in options[-1]
        control = Path(options[3].removeprefix("ControlPath=")).parent
        assert stat.S_IMODE(control.stat().st_mode) == 0o700 and control.stat().st_uid == os.getuid()
        assert hosts.command("sub", ["true"])[3:-3] == options  # one directory, a socket per host (%C)
    finally:
        close_shared_connections()
    assert not control.exists()


@pytest.mark.parametrize("own", [("-o", "ControlMaster=no"), ("-oControlPath=/x/%C",), ("-S", "none")])
def test_the_users_own_sharing_options_are_left_alone(own):
    hosts = SshHosts(parse_hosts("pub=a@10.1.0.1,sub=b@10.1.0.2", ssh_options=own))
    assert hosts.command("pub", ["true"]) == ["ssh", *own, "a@10.1.0.1", "--", "true"]


@pytest.mark.parametrize("spec, message", [
    ("pub=a@h1", "--hosts pub=a@h1: needs both pub= and sub="),
    ("pub=-oProxyCommand=x,sub=b@10.0.0.2", "--hosts pub=-oProxyCommand=x,sub=b@10.0.0.2: '-oProxyCommand=x' is not"),
    ("pub=a@h1,sub=b@h2", "--hosts pub=a@h1,sub=b@h2: pub data address 'h1' is not an IPv4 address"),
    ("pub=a;rm,sub=b@10.0.0.2", "--hosts pub=a;rm,sub=b@10.0.0.2: 'a;rm' is not a [user@]host"),
])
def test_bad_hosts(spec, message):
    with pytest.raises(UsageError) as err:
        parse_hosts(spec)
    assert str(err.value).startswith(message)


def sshd_config(tmp, addr, host_key, authorized):
    path = tmp / f"sshd-{addr}.conf"
    path.write_text(f"ListenAddress {addr}\nPort 22\nHostKey {host_key}\nAuthorizedKeysFile {authorized}\n"
                    "PermitRootLogin prohibit-password\nPasswordAuthentication no\nStrictModes no\nUsePAM no\n"
                    "PidFile none\n")
    return path


@pytest.mark.e2e
@pytest.mark.skipif(not ROOT or not os.path.exists(SSHD), reason="needs root, openssh-server and the net tools")
def test_ssh_launcher_end_to_end(tmp_path):
    agent = real_agent_path()
    if agent is None:
        pytest.skip("the agent is not built")
    os.makedirs("/run/sshd", exist_ok=True)
    key, host_key = tmp_path / "id", tmp_path / "host_key"
    for k in (key, host_key):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(k)], check=True)
    authorized = tmp_path / "authorized_keys"
    authorized.write_text((tmp_path / "id.pub").read_text())
    logs = [tmp_path / f"sshd-{role}.log" for role in ("pub", "sub")]
    with NetnsPair(parse_link("netns")) as pair:
        daemons = [subprocess.Popen(pair.exec_prefix(role) + [SSHD, "-D", "-e", "-f",
                                                              str(sshd_config(tmp_path, addr, host_key, authorized))],
                                    stdout=subprocess.DEVNULL, stderr=open(log, "w"))
                   for role, addr, log in (("pub", pair.addr[0], logs[0]), ("sub", pair.addr[1], logs[1]))]
        try:
            time.sleep(1.0)
            env = dict(os.environ, MWPERF_SSH_OPTIONS=f"-i {key} -o StrictHostKeyChecking=no "
                                                      "-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR")
            out = tmp_path / "run"
            done = subprocess.run(pair.exec_prefix("pub") + [
                sys.executable, "-m", "mwperf", "run", "--agent", str(agent), "--mw", "udp,tcp",
                "--mode", "latency,rate", "--rate", "1000", "--size", "1k", "--duration", "500ms", "--warmup", "100ms",
                "--hosts", f"pub=root@{pair.addr[0]},sub=root@{pair.addr[1]}", "--direction", "both",
                "--out", str(out)],
                capture_output=True, text=True, timeout=240, env=env)
        finally:
            for d in daemons:
                d.terminate()
                d.wait(timeout=10)
    assert done.returncode == 0, done.stderr[-3000:]
    records = written(out)
    assert len(records) == 8  # 4 points, each A->B then B->A
    assert [r["link"]["direction"] for r in records] == ["forward", "reverse"] * 4
    for r in records:
        assert r["status"] == "ok", r["error"]
        forward = r["link"]["direction"] == "forward"
        assert r["link"]["kind"] == "ssh"
        assert r["link"]["data"] == ([pair.addr[0], pair.addr[1]] if forward else [pair.addr[1], pair.addr[0]])
        assert r["received"] + r["lost"] == r["sent"]
        assert r["clock"]["same_clock"] is False and abs(r["clock"]["offset_us"]) <= r["clock"]["uncertainty_us"] + 50
    # each point opened 4+ sessions per host (clock exchanges, agents); sshd saw a connection or two per host
    for log in logs:
        accepted = len(re.findall(r"Accepted publickey", log.read_text()))
        assert 1 <= accepted <= 2, log.read_text()[-2000:]
    assert not [p for p in Path("/proc").glob("[0-9]*") if b"mwperf-ssh-" in _cmdline(p)]  # masters ended


def _cmdline(pid_dir: Path) -> bytes:
    try:
        return (pid_dir / "cmdline").read_bytes()
    except OSError:
        return b""


def test_direction_both_needs_hosts(tmp_path):
    done = subprocess.run([sys.executable, "-m", "mwperf", "run", "--mw", "udp", "--direction", "both",
                           "--out", str(tmp_path / "r")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.startswith("mwperf: error: --direction both: only with --hosts")


def test_nic_of_remote_hosts_is_not_checked_here(tmp_path):
    from conftest import described, run_request
    from mwperf.plan.validate import build_run_options

    def build(**kw):
        return build_run_options(run_request(mw="cyclonedds", cpu="0,1", out=str(tmp_path / "r"),
                                             qos={"nic": "enp99s0"}, **kw), described())

    opts = build(hosts="pub=a@10.0.0.1,sub=b@10.0.0.2")
    assert opts.given("nic") == ("enp99s0",) and opts.hosts.nic == "enp99s0"
    with pytest.raises(UsageError, match=r"--nic enp99s0: no such network interface"):
        build()
