"""What a command's UDP datagrams carry on the wire (the DDS Security tests'
ground truth): ``captured(argv)`` runs ``argv`` in a network namespace of its
own (``unshare --net``: its lo only, gone with its last process, so no packet
can reach another interface, and no other test's traffic is seen) while a
packet socket on that lo reads every UDP datagram the kernel carries, and
counts those that hold ``needle``. Run as a script (inside the namespace):
``python wire.py NEEDLE_HEX OUT.json -- argv...``."""

from __future__ import annotations

import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

ETH_P_IP = 0x0800
PACKET_OUTGOING = 4  # lo shows every packet twice: sent (outgoing) and received; the received copy counts
ETH_HEADER = 14
UDP = 17


@dataclass
class Capture:
    returncode: int
    stdout: str
    stderr: str
    datagrams: int  # UDP datagrams on lo while the command ran
    with_needle: int  # of them, those whose bytes hold the needle
    largest: int  # the largest datagram's UDP payload, bytes


def available() -> str | None:
    """None when a capture can run here, else why not."""
    if os.geteuid() != 0:
        return "needs root (a network namespace and a packet socket)"
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return "needs unshare and ip"
    return None


def captured(argv: list[str], needle: bytes, out: Path, *, timeout: float = 180,
             env: dict | None = None) -> Capture:
    """``argv`` run in a namespace of its own with its UDP datagrams read on the wire (see the module)."""
    report = out.with_suffix(".wire.json")
    done = subprocess.run(["unshare", "--net", "--", sys.executable, __file__, needle.hex(), str(report), "--", *argv],
                          capture_output=True, text=True, timeout=timeout, env=env)
    counts = json.loads(report.read_text()) if report.exists() else {}
    return Capture(done.returncode, done.stdout, done.stderr, counts.get("datagrams", 0),
                   counts.get("with_needle", 0), counts.get("largest", 0))


def _udp_payload(frame: bytes) -> bytes | None:
    ip = frame[ETH_HEADER:]
    if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != UDP:
        return None
    start = (ip[0] & 0x0F) * 4 + 8
    (total,) = struct.unpack("!H", ip[2:4])
    return ip[start:total]


def _main(needle_hex: str, report: str, argv: list[str]) -> int:
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    needle = bytes.fromhex(needle_hex)
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_IP))
    sock.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)  # SO_RCVBUFFORCE (as root): no datagram dropped unread
    sock.bind(("lo", 0))
    sock.settimeout(0.2)
    counts = {"datagrams": 0, "with_needle": 0, "largest": 0}
    stop = threading.Event()

    def read() -> None:
        while True:  # until the command is done and every datagram it sent is read
            try:
                frame, addr = sock.recvfrom(1 << 17)
            except socket.timeout:
                if stop.is_set():
                    return
                continue
            payload = _udp_payload(frame) if addr[2] != PACKET_OUTGOING else None
            if payload is None:
                continue
            counts["datagrams"] += 1
            counts["largest"] = max(counts["largest"], len(payload))
            counts["with_needle"] += needle in payload

    reader = threading.Thread(target=read)
    reader.start()
    try:
        done = subprocess.run(argv, check=False)
    finally:
        stop.set()
        reader.join()
        Path(report).write_text(json.dumps(counts))
    return done.returncode


if __name__ == "__main__":
    split = sys.argv.index("--")
    sys.exit(_main(sys.argv[1], sys.argv[2], sys.argv[split + 1:]))
