"""What reaches a far host's command line is checked before anything runs there (issue 45.6, 45.13): a
``--remote-dir`` with a newline installed into the prefix before it (the far shell ran the rest as a command of
its own), ``$MWPERF_SSH_OPTIONS`` with an unbalanced quote was a traceback. Each one line, exit 2, and no host
asked (``ask``, the first thing that runs on a host, is replaced by one that says it was called: no packet
leaves this machine either way)."""

from __future__ import annotations

import pytest

from mwperf.cli.main import main
from mwperf.errors import UsageError

HOSTS = "pub=robot@192.0.2.1,sub=robot@192.0.2.2"  # TEST-NET-1: never reached, ask is replaced


@pytest.fixture
def asked(monkeypatch):
    """The hosts ask() was called for; it refuses, so nothing goes on."""
    calls: list[str] = []

    def ask(target, options, remote_dir):
        calls.append(target)
        raise UsageError("--hosts", target, "asked (a host was reached)")

    monkeypatch.setattr("mwperf.hosts.prepare.ask", ask)
    monkeypatch.delenv("MWPERF_SSH_OPTIONS", raising=False)
    return calls


@pytest.mark.parametrize("option, value", [
    ("--remote-dir", "cache\n/home/robot/x"),
    ("--remote-dir", "cache\r"),
    ("--remote-dir", "cache\x1b]0;x\x07"),
    ("--remote-dir", "cache\x00/x"),
    ("--agent", "/opt/mwperf-agent\nid"),
])
def test_a_control_character_for_a_far_host_is_refused_before_any_host_is_asked(asked, capsys, option, value):
    assert main(["hosts", "check", "--hosts", HOSTS, option, value]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"mwperf: error: {option} "), err
    assert "holds a control character" in err and "\x1b" not in err and "\x00" not in err
    assert asked == []


def test_a_nic_with_a_newline_is_refused_by_the_hosts_parser():
    from mwperf.plan.where import parse_hosts

    with pytest.raises(UsageError, match="^--nic eth0\\\\ntouch: holds a control character"):
        parse_hosts(HOSTS, nic="eth0\ntouch")


@pytest.mark.parametrize("options, said", [
    ("-i '/keys/my key", "not ssh options as a shell splits them (No closing quotation)"),
    ('-o "ProxyCommand=x', "not ssh options as a shell splits them (No closing quotation)"),
    ("-o 'A=b\nc'", "holds a control character"),
])
def test_ssh_options_that_cannot_be_split_are_one_line(asked, capsys, monkeypatch, options, said):
    monkeypatch.setenv("MWPERF_SSH_OPTIONS", options)
    assert main(["hosts", "check", "--hosts", HOSTS]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("mwperf: error: MWPERF_SSH_OPTIONS ") and said in err, err
    assert asked == []


def test_ssh_options_as_a_shell_splits_them(monkeypatch):
    from mwperf.plan.where import parse_hosts

    monkeypatch.setenv("MWPERF_SSH_OPTIONS", "-i '/keys/my key' -o Port=2222")
    assert parse_hosts(HOSTS).ssh_options[-4:] == ("-i", "/keys/my key", "-o", "Port=2222")
