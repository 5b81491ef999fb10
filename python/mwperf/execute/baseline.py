"""The raw capacity of a ``--link``, measured by iperf3 (TCP, and UDP with
65507-byte datagrams) over the same namespace pair the middleware points
use; ``mwperf baseline`` stores it as DIR/baseline.json so the report shows
it beside the middleware numbers."""

from __future__ import annotations

import json
import shutil
import subprocess
import time

from mwperf.errors import UsageError
from mwperf.execute.netns import NetnsPair
from mwperf.plan.where import LinkProfile
from mwperf.model.merge import utc_now_iso

__all__ = ["iperf3", "measure"]

PORT = 5299


def iperf3(pair: NetnsPair, seconds: float, udp: bool) -> dict:
    """One iperf3 test from the publisher's side to the subscriber's: {gbps, ...}."""
    server = subprocess.Popen(pair.exec_prefix("sub") + ["iperf3", "-s", "-1", "-B", pair.addr[1], "-p", str(PORT)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)  # no probe connection: it would use up the one-off (-1) server
        client = ["iperf3", "-c", pair.addr[1], "-p", str(PORT), "-t", f"{seconds:g}", "-J"]
        if udp:
            client += ["-u", "-b", "0", "-l", "65507"]
        done = subprocess.run(pair.exec_prefix("pub") + client, capture_output=True, text=True,
                              timeout=seconds + 30)
    finally:
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
    try:
        end = json.loads(done.stdout)["end"]
    except (ValueError, KeyError):
        raise OSError(f"iperf3 {'UDP' if udp else 'TCP'} failed: {done.stderr.strip() or done.stdout[-300:]}") from None
    if udp:
        s = end["sum"]
        return {"gbps": s["bits_per_second"] / 1e9, "lost_percent": s.get("lost_percent")}
    return {"gbps": end["sum_received"]["bits_per_second"] / 1e9,
            "retransmits": end.get("sum_sent", {}).get("retransmits")}


def measure(profile: LinkProfile, seconds: float) -> dict:
    """baseline.json: iperf3 TCP, and UDP with 65507-byte datagrams, over a
    namespace pair of ``profile``."""
    if shutil.which("iperf3") is None:
        raise UsageError("baseline", None, "iperf3 is not installed (scripts/install-deps.sh installs it)")
    with NetnsPair(profile) as pair:
        tcp = iperf3(pair, seconds, udp=False)
        udp = iperf3(pair, seconds, udp=True)
    version = subprocess.run(["iperf3", "--version"], capture_output=True, text=True).stdout.split("\n", 1)[0]
    return {"time": utc_now_iso(), "link": profile.as_dict(), "duration_s": seconds, "tool": version.strip(),
            "tcp": tcp, "udp": udp}
