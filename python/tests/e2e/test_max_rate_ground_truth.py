"""``mwperf max-rate`` against ground truth the test sets up: a 10 Mbit/s tbf
between two network namespaces. The tbf counts Ethernet frames, so a 1 KiB
udp message (mwperf's 32-byte header included) is 1024 + 8 (UDP) + 20 (IPv4)
+ 14 (Ethernet) = 1066 bytes on it: 10 Mbit/s carries 1172.6 of them a
second, and a rate whose missing share is 1 % is 1184.4 Hz. The search's
answer must lie within ±15 % of that; nothing the answer is checked against
comes from mwperf's own figures. (Probes of 1 s: what the tbf's bucket and
queue pass beyond the rate adds ~6 % to the answer, 1242 Hz three times of
three with the bracketing search; the probabilistic bisection at a 10 %
step answers the rate the limit lies above at 95 %, 1218-1236 Hz.)"""

import os
import shutil
import subprocess
import sys

import pytest

from conftest import real_agent_path
from conftest import written
from mwperf.model.schema import validate_record

ROOT = os.geteuid() == 0 and all(shutil.which(t) for t in ("ip", "tc", "nft"))
FRAME_BYTES = 1024 + 8 + 20 + 14
CARRIED_HZ = 10e6 / 8 / FRAME_BYTES  # 1172.6


@pytest.mark.e2e
@pytest.mark.skipif(not ROOT, reason="needs root, ip, tc and nft")
def test_max_rate_over_a_10_mbit_link(tmp_path):
    agent = real_agent_path()
    if agent is None:
        pytest.skip("the agent is not built")
    out = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "mwperf", "max-rate", "--agent", str(agent), "--mw", "udp",
                           "--size", "1k", "--loss", "1%", "--step", "10%", "--link", "netns:rate=10mbit", "--duration", "1s",
                           "--warmup", "200ms", "--no-floor", "--db", "none", "--out", str(out)],
                          capture_output=True, text=True, timeout=170)
    assert done.returncode == 0, done.stderr[-2000:]
    records = written(out)
    for r in records:
        validate_record(r)
        assert r["link"]["rate_mbit"] == 10.0 and r["mode"] == "rate"
    last = records[-1]["search"]
    assert last["done"] and [r["search"]["done"] for r in records].count(True) == 1
    answer = last["max_rate_hz"]
    assert 0.85 * CARRIED_HZ <= answer <= 1.15 * CARRIED_HZ, (answer, CARRIED_HZ)
    lo, hi = last["bracket"]  # the limit's 90 % interval: the answer is its lower end
    assert lo == answer < hi
    # probes above the answer missed more than 1 % of their due samples; one at or below it met the criterion
    assert any(not r["search"]["met"] and r["search"]["missing"] > 0.01 for r in records if r["rate_hz"] > answer)
    assert any(r["search"]["met"] for r in records if r["rate_hz"] <= hi)
    assert f"{answer:g}" in done.stdout and "max rate (loss <= 1%, step 10%)" in done.stdout
    print(f"max-rate over 10 Mbit/s, 1 KiB udp, 1 % loss: {answer:g} Hz (carried: {CARRIED_HZ:.1f} Hz, "
          f"{len(records)} probes)")
