"""The clock exchange over the control channel: when the other side cannot
be reached, the failure carries its own reason (ssh's: refused, unknown
host, a key), not only that the exchange failed."""

from __future__ import annotations

import shutil
import sys

import pytest

from conftest import write_script
from mwperf.execute.clocks import estimate, side_offset
from mwperf.plan.where import SSH_OPTIONS


def test_a_side_that_fails_says_why(tmp_path):
    refused = write_script(tmp_path / "ssh", "#!/bin/sh\necho 'ssh: connect to host 10.0.0.9 port 22: "
                                             "Connection refused' >&2\nexit 255\n")
    with pytest.raises(OSError, match=r"^clock exchange with '.*ssh' failed: ssh: connect to host 10.0.0.9 port 22: "
                                      r"Connection refused$"):
        side_offset([str(refused)])
    silent = write_script(tmp_path / "silent", "#!/bin/sh\nexit 3\n")
    with pytest.raises(OSError, match=r"failed: exit 3$"):
        side_offset([str(silent)])
    chatty = write_script(tmp_path / "chatty", "#!/bin/sh\nread x\necho 'Welcome!'\n")
    with pytest.raises(OSError, match=r"not a clock reading: 'Welcome!'"):
        side_offset([str(chatty)])


def test_estimate_names_the_host_that_failed(tmp_path):
    fine = [sys.executable, "-c", "import json, sys, time\nfor _ in sys.stdin:\n"
                                  "    print(json.dumps({'mono_ns': time.monotonic_ns()}), flush=True)\n"]
    refused = write_script(tmp_path / "ssh", "#!/bin/sh\necho 'Permission denied (publickey).' >&2\nexit 255\n")
    with pytest.raises(OSError, match=r"^sub host: clock exchange .* failed: Permission denied \(publickey\)\.$"):
        estimate(fine, [str(refused)], same_clock=False, exchanges=3)


@pytest.mark.skipif(shutil.which("ssh") is None, reason="no ssh client")
def test_ssh_own_reason_for_a_host_that_refuses():
    """A loopback address nothing listens on (the packet stays on lo)."""
    with pytest.raises(OSError, match=r"failed: ssh: connect to host 127\.0\.0\.9 port 22: Connection refused"):
        side_offset(["ssh", *SSH_OPTIONS, "nobody@127.0.0.9", "--", "mwperf-agent clock"])
