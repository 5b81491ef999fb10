"""``mwperf baseline --link netns[:PROFILE]``: the raw capacity of a link,
measured by iperf3 (TCP, and UDP with 65507-byte datagrams) over the same
namespace pair the middleware points use, stored as DIR/baseline.json so the
report shows it beside the middleware numbers."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import TextIO

from mwperf.netns import NetnsPair, parse_link
from mwperf.options import UsageError
from mwperf.record import utc_now_iso
from mwperf.units import UnitError, parse_duration_ns

__all__ = ["BASELINE_JSON", "iperf3", "run_baseline", "read_baseline"]

BASELINE_JSON = "baseline.json"
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


def run_baseline(link: str, out: str, duration: str, stream: TextIO) -> int:
    profile = parse_link(link)
    try:
        seconds = parse_duration_ns(duration) / 1e9
    except UnitError as exc:
        raise UsageError(f"--duration {duration}: {exc}") from None
    if shutil.which("iperf3") is None:
        raise UsageError("baseline: iperf3 is not installed (scripts/install-deps.sh installs it)")
    directory = Path(out)
    directory.mkdir(parents=True, exist_ok=True)
    with NetnsPair(profile) as pair:
        tcp = iperf3(pair, seconds, udp=False)
        udp = iperf3(pair, seconds, udp=True)
    version = subprocess.run(["iperf3", "--version"], capture_output=True, text=True).stdout.split("\n", 1)[0]
    doc = {"time": utc_now_iso(), "link": profile.as_dict(), "duration_s": seconds, "tool": version.strip(),
           "tcp": tcp, "udp": udp}
    (directory / BASELINE_JSON).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    stream.write(f"link {profile.name}: iperf3 TCP {tcp['gbps']:.3f} Gbit/s, UDP (65507 B) {udp['gbps']:.3f} Gbit/s"
                 f" received, {udp['lost_percent'] or 0:.2f} % lost -> {directory / BASELINE_JSON}\n")
    return 0


def read_baseline(directory: Path) -> dict | None:
    try:
        return json.loads((directory / BASELINE_JSON).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
