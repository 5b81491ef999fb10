"""What a far host says of itself, read (mwperf.hosts.probe): the script's output as a host printed it,
an address's interface found by the address or the routing table, chrony's tracking line."""

import subprocess

import pytest

from mwperf.hosts.probe import SCRIPT, nic_of, parse

# What the script printed on one of the tests' far hosts (robot@, its home read-only), /proc/net/route's
# lines added: 10.251.7.0/24 on eth0 and a default route via 10.251.7.1.
OUTPUT = """arch=aarch64
kernel=6.1.0-21-arm64
glibc=glibc 2.36
cpus=4
cpu_model= Raspberry Pi 4 Model B Rev 1.4
home=/home/ro
dir=/home/ro/.cache/mwperf/bundles
writable=0
write_error=mkdir: cannot create directory '/home/ro/.cache': Read-only file system 
df=/dev/mmcblk0p2 30358348 8123456 20893708 29% /
installed=8b1a9953c4611296a827abf8c47804d7e6c49c6b8a3b2f1c0d3e4f5a6b7c8d9e  /home/ro/.cache/mwperf/bundles/aa11/manifest.json
sysctl.net/core/rmem_max=212992
sysctl.net/ipv4/ipfrag_high_thresh=4194304
sysctl.net/ipv4/udp_mem=	 45720	60960	91440
sysctl.net/core/wmem_default=
nic=eth0 1500 1000 bcmgenet
nic=lo 65536 - -
nic=wlan0 1500 -1 brcmfmac
route=eth0 0007FB0A 00000000 00FFFFFF
route=eth0 00000000 0107FB0A 00000000
daemon=chronyd
chrony=A29FC87B,ntp.example,3,1700000000.123,-0.000012345,0.000001500,0.000020000,1.2,0.01,0.1,0.001,0.002,64.0,Normal
end=1
"""


def test_a_hosts_answer_is_read_field_by_field():
    facts = parse("robot@pi", OUTPUT)
    assert (facts.arch, facts.kernel, facts.glibc, facts.cpus) == ("aarch64", "6.1.0-21-arm64", "2.36", 4)
    assert facts.cpu_model == "Raspberry Pi 4 Model B Rev 1.4"
    assert not facts.writable and "Read-only file system" in facts.write_error
    assert (facts.free_kb, facts.free_on) == (20893708, "/")
    assert facts.installed == {"aa11": "8b1a9953c4611296a827abf8c47804d7e6c49c6b8a3b2f1c0d3e4f5a6b7c8d9e"}
    assert facts.sysctls == {"net.core.rmem_max": 212992, "net.ipv4.ipfrag_high_thresh": 4194304,
                             "net.ipv4.udp_mem": "45720 60960 91440", "net.core.wmem_default": None}
    assert facts.nics["lo"].speed_mbit is None and facts.nics["wlan0"].speed_mbit is None
    assert facts.sync() == {"ptp4l": False, "phc2sys": False, "chronyd": True, "ntpd": False,
                            "systemd-timesyncd": False,
                            "chrony": {"reference": "ntp.example", "stratum": 3, "offset_us": -12.345,
                                       "last_offset_us": 1.5, "rms_offset_us": 20.0}}


def test_the_data_address_interface_is_the_most_specific_route_without_ip():
    facts = parse("robot@pi", OUTPUT)
    assert nic_of(facts, "10.251.7.20").as_dict() == {"name": "eth0", "driver": "bcmgenet", "speed_mbit": 1000,
                                                      "mtu": 1500}
    assert nic_of(facts, "192.168.1.9").name == "eth0"  # the default route
    facts.routes = []
    facts.addresses = {"10.251.7.20": "wlan0"}
    assert nic_of(facts, "10.251.7.20").driver == "brcmfmac"
    assert nic_of(facts, "10.0.0.1") is None


@pytest.mark.parametrize("cut", ["", "arch=x86_64\n", OUTPUT.replace("end=1\n", "")])
def test_an_answer_cut_short_is_no_answer(cut):
    with pytest.raises(ValueError, match="did not answer"):
        parse("robot@pi", cut)


def test_the_script_runs_in_a_posix_shell_here(tmp_path):
    """dash, as on Debian's far hosts: every line parses, the cache directory is made, this host's facts."""
    done = subprocess.run(["dash", "-c", SCRIPT, "probe", str(tmp_path / "cache")], capture_output=True, text=True,
                          timeout=60)
    facts = parse("me@here", done.stdout)
    assert facts.writable and (tmp_path / "cache").is_dir() and facts.dir == str(tmp_path / "cache")
    assert facts.arch == subprocess.run(["uname", "-m"], capture_output=True, text=True).stdout.strip()
    assert facts.sysctls["net.core.rmem_max"] == int(open("/proc/sys/net/core/rmem_max").read())
    assert nic_of(facts, "127.0.0.1").name == "lo"


def test_what_hosts_check_prints_of_a_host_golden():
    """`mwperf hosts check`'s line for a host (before the agent it runs), and its record (hosts.pub/sub)."""
    import json

    from conftest import check_golden

    facts = parse("robot@pi", OUTPUT)
    record = facts.record("10.251.7.20")
    check_golden("hosts-check.txt", facts.describe() + "\n" + json.dumps(record, indent=1, sort_keys=True) + "\n")
