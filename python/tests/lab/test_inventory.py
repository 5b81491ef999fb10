"""A lab's inventory is read by Ansible (ansible-inventory) and checked before anything runs: a file Ansible
cannot read, a host mwperf cannot reach as written, a pair naming a host the inventory lacks, each one line,
exit 2; the hosts and pairs of a good one as written (ssh options, data address, order)."""

from __future__ import annotations

import textwrap

import pytest

from mwperf.cli.main import main
from mwperf.lab import inventory

GOOD = """\
all:
  vars:
    ansible_user: robot
    ansible_ssh_common_args: -o ConnectTimeout=5
  children:
    boards:
      hosts:
        pi:
          ansible_host: 10.0.0.2
          ansible_ssh_private_key_file: /keys/pi
        jetson:
          ansible_host: 10.0.0.3
          ansible_port: 2222
          mwperf_data: 192.168.1.3
    pcs:
      hosts:
        laptop:
          ansible_host: 10.0.0.1
"""


def _write(tmp_path, text: str, name: str = "lab.yml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def _sweep(tmp_path, capsys, inv, *args: str) -> str:
    plan = tmp_path / "plan.yaml"
    plan.write_text("mw: udp\nmode: rate\n")
    assert main(["sweep", str(plan), "--inventory", str(inv), *args, "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert not (tmp_path / "run").exists()
    return err


def test_the_hosts_and_pairs_as_written(tmp_path):
    inv = inventory.read(str(_write(tmp_path, GOOD)))
    assert list(inv.hosts) == ["pi", "jetson", "laptop"]
    pi, jetson = inv.hosts["pi"], inv.hosts["jetson"]
    assert (pi.target, pi.data) == ("robot@10.0.0.2", "10.0.0.2")
    assert (jetson.target, jetson.data) == ("ssh://robot@10.0.0.3:2222", "192.168.1.3")
    assert inv.pairs("all") == [("pi", "jetson"), ("pi", "laptop"), ("jetson", "laptop")]
    pair = inv.host_pair("laptop", "pi")
    assert (pair.name, pair.pub, pair.sub, pair.data) == ("laptop:pi", "robot@10.0.0.1", "robot@10.0.0.2",
                                                          ("10.0.0.1", "10.0.0.2"))
    assert "/keys/pi" in pair.ssh_options and "ConnectTimeout=5" in pair.ssh_options
    assert pair.reversed().name == "pi:laptop"


@pytest.mark.parametrize("pairs, said", [
    ("laptop:nas", "--pairs laptop:nas: nas is not a host of"),
    ("laptop", "--pairs laptop: 'laptop': expected PUB:SUB"),
    ("pi:pi", "--pairs pi:pi: 'pi:pi': a pair is two different hosts"),
])
def test_an_unknown_or_malformed_pair_is_one_line(tmp_path, capsys, pairs, said):
    err = _sweep(tmp_path, capsys, _write(tmp_path, GOOD), "--pairs", pairs)
    assert err.startswith(f"mwperf: error: {said}"), err


@pytest.mark.parametrize("text, said", [
    ("all:\n  hosts:\n    pi: [not, a, mapping\n", "ansible-inventory: "),
    ("all:\n  hosts:\n    pi:\n      ansible_connection: winrm\n", "host pi: ansible_connection winrm: mwperf "
                                                                    "reaches hosts over ssh only"),
    ("all:\n  hosts:\n    pi:\n      ansible_password: secret\n", "host pi: ansible_password: mwperf logs in "
                                                                  "with keys only"),
    ("all:\n  hosts:\n    pi:\n      ansible_host: no-such-host.invalid\n", "host pi: no-such-host.invalid does "
                                                                            "not resolve"),
    ("all:\n  hosts: {}\n", "no hosts in it"),
    # issue 45.13: a newline in a value that reaches a far host's command line
    ('all:\n  hosts:\n    pi:\n      ansible_host: 10.0.0.2\n      mwperf_nic: "eth0\\ntouch /tmp/x"\n',
     "host pi: mwperf_nic holds a control character"),
    ('all:\n  hosts:\n    pi:\n      ansible_host: 10.0.0.2\n      ansible_ssh_common_args: "-o A=b\\x1b[2J"\n',
     "host pi: ansible_ssh_common_args holds a control character"),
])
def test_a_bad_inventory_is_one_line(tmp_path, capsys, text, said):
    inv = _write(tmp_path, text)
    err = _sweep(tmp_path, capsys, inv)
    assert err.startswith(f"mwperf: error: --inventory {inv}: ") and said in err, err


def test_a_missing_inventory_and_lab_options_alone_are_one_line(tmp_path, capsys):
    err = _sweep(tmp_path, capsys, tmp_path / "none.yml")
    assert err == f"mwperf: error: --inventory {tmp_path / 'none.yml'}: no such file\n"
    plan = tmp_path / "plan.yaml"
    assert main(["sweep", str(plan), "--pairs", "a:b"]) == 2
    assert capsys.readouterr().err == "mwperf: error: --pairs a:b: only with --inventory\n"


def test_ssh_options_with_an_unbalanced_quote_are_one_line(tmp_path, capsys, monkeypatch):
    """Issue 45.6: $MWPERF_SSH_OPTIONS with an unbalanced quote was shlex's traceback (No closing quotation)."""
    monkeypatch.setenv("MWPERF_SSH_OPTIONS", "-i '/keys/my key")
    err = _sweep(tmp_path, capsys, _write(tmp_path, GOOD), "--pairs", "laptop:pi")
    assert err.startswith("mwperf: error: MWPERF_SSH_OPTIONS -i '/keys/my key: not ssh options as a shell splits "
                          "them (No closing quotation)"), err
