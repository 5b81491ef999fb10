"""What a command's UDP datagrams carry on the wire (the DDS Security tests'
ground truth): ``captured(argv)`` runs ``argv`` in a network namespace of its
own (``unshare --net``: its lo only, gone with its last process, so no packet
can reach another interface, and no other test's traffic is seen) while
tcpdump captures every UDP datagram on that lo, and counts those that hold
``needle``, and of those the ones whose RTPS submessages are signed
(SEC_PREFIX ... SEC_POSTFIX around them) or encrypted (a SEC_BODY). tcpdump
is started first and the command only once it says it is listening, and the
capture is stopped (by its pid) once the command is done; a datagram the
kernel dropped is counted (``dropped``), so "nowhere" means nowhere. Run as a
script (inside the namespace): ``python wire.py NEEDLE_HEX OUT.json -- argv...``."""

from __future__ import annotations

import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

UDP = 17
#: Link-layer header lengths of the link types tcpdump may give lo (pcap's numbers).
LINK_HEADER = {1: 14, 113: 16, 276: 20}  # Ethernet, Linux cooked v1, v2
#: RTPS submessage ids (DDS Security 1.1, 7.3.6): a protected submessage's prefix, body and postfix.
SEC_BODY, SEC_PREFIX, SEC_POSTFIX = 0x30, 0x31, 0x32
SEC_IDS = (SEC_BODY, SEC_PREFIX, SEC_POSTFIX, 0x33, 0x34)  # and SRTPS_PREFIX, SRTPS_POSTFIX


@dataclass
class Capture:
    returncode: int
    stdout: str
    stderr: str
    datagrams: int  # UDP datagrams on lo while the command ran
    with_needle: int  # of them, those whose bytes hold the needle
    largest: int  # the largest datagram's UDP payload, bytes
    signed_needle: int = 0  # datagrams with the needle inside a SEC_PREFIX ... SEC_POSTFIX submessage
    encrypted: int = 0  # datagrams with a SEC_BODY (an encrypted submessage)
    plain: int = 0  # RTPS datagrams with no DDS Security submessage at all
    dropped: int = -1  # datagrams tcpdump says the kernel dropped (-1: it did not say)


def available() -> str | None:
    """None when a capture can run here, else why not."""
    if os.geteuid() != 0:
        return "needs root (a network namespace and a capture)"
    for tool in ("unshare", "ip", "tcpdump"):
        if shutil.which(tool) is None:
            return f"needs {tool} (scripts/install-deps.sh installs it)"
    return None


def captured(argv: list[str], needle: bytes, out: Path, *, timeout: float = 180,
             env: dict | None = None) -> Capture:
    """``argv`` run in a namespace of its own with its UDP datagrams read on the wire (see the module)."""
    report = out.with_suffix(".wire.json")
    done = subprocess.run(["unshare", "--net", "--", sys.executable, __file__, needle.hex(), str(report), "--", *argv],
                          capture_output=True, text=True, timeout=timeout, env=env)
    counts = json.loads(report.read_text()) if report.exists() else {}
    return Capture(done.returncode, done.stdout, done.stderr, **{k: counts.get(k, 0) for k in (
        "datagrams", "with_needle", "largest", "signed_needle", "encrypted", "plain")}, dropped=counts.get("dropped", -1))


def submessages(rtps: bytes) -> list[tuple[int, int, int]]:
    """An RTPS message's submessages: (id, start, end) of each, in order ([] for what is not RTPS)."""
    if rtps[:4] != b"RTPS" or len(rtps) < 20:
        return []
    out, at = [], 20
    while at + 4 <= len(rtps):
        sid, flags = rtps[at], rtps[at + 1]
        (length,) = struct.unpack("<H" if flags & 1 else ">H", rtps[at + 2:at + 4])
        end = len(rtps) if length == 0 else min(len(rtps), at + 4 + length)
        out.append((sid, at, end))
        at = end
    return out


def _signed_needle(rtps: bytes, needle: bytes) -> bool:
    """The needle inside a submessage between a SEC_PREFIX and its SEC_POSTFIX (signed, in clear)."""
    subs = submessages(rtps)
    for i, (sid, _, _) in enumerate(subs):
        if sid == SEC_PREFIX and i + 2 < len(subs) and subs[i + 2][0] == SEC_POSTFIX:
            _, start, end = subs[i + 1]
            if needle in rtps[start:end]:
                return True
    return False


def _datagrams(pcap: bytes):
    """Each UDP payload of a pcap stream (IPv4 and IPv6)."""
    if len(pcap) < 24:
        return
    magic = pcap[:4]
    order = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    (link,) = struct.unpack(order + "I", pcap[20:24])
    header = LINK_HEADER[link]
    at = 24
    while at + 16 <= len(pcap):
        _, _, caught, _ = struct.unpack(order + "IIII", pcap[at:at + 16])
        frame = pcap[at + 16:at + 16 + caught]
        at += 16 + caught
        ip = frame[header:]
        if len(ip) >= 20 and ip[0] >> 4 == 4 and ip[9] == UDP:
            (total,) = struct.unpack("!H", ip[2:4])
            yield ip[(ip[0] & 0x0F) * 4 + 8:total]
        elif len(ip) >= 48 and ip[0] >> 4 == 6 and ip[6] == UDP:
            (length,) = struct.unpack("!H", ip[4:6])
            yield ip[48:40 + length]


def _main(needle_hex: str, report: str, argv: list[str]) -> int:
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    needle = bytes.fromhex(needle_hex)
    # -U: every packet written as it comes; -B: a 64 MiB buffer (no datagram dropped unread); -Z root: no
    # change of user (it would not matter: the stream goes to a pipe)
    dump = subprocess.Popen(["tcpdump", "-i", "lo", "-n", "-U", "-s", "0", "-B", "65536", "-Z", "root", "-w", "-",
                             "udp"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    chunks: list[bytes] = []
    said: list[str] = []
    listening = threading.Event()

    def read_out() -> None:
        assert dump.stdout is not None
        while block := dump.stdout.read1(1 << 16):
            chunks.append(block)

    def read_err() -> None:
        assert dump.stderr is not None
        for line in dump.stderr:
            said.append(line.decode(errors="replace").strip())
            if "listening on" in said[-1]:
                listening.set()

    readers = [threading.Thread(target=read_out), threading.Thread(target=read_err)]
    for reader in readers:
        reader.start()
    counts = {"datagrams": 0, "with_needle": 0, "largest": 0, "signed_needle": 0, "encrypted": 0, "plain": 0}
    code = 1
    try:
        if not listening.wait(20):
            print(f"wire.py: tcpdump did not start: {said}", file=sys.stderr)
            return 1
        code = subprocess.run(argv, check=False).returncode
        time.sleep(0.3)  # the last datagrams through the capture
    finally:
        if dump.poll() is None:
            os.kill(dump.pid, signal.SIGINT)  # tcpdump writes what it holds and its counts
        try:
            dump.wait(20)
        except subprocess.TimeoutExpired:
            dump.kill()
            dump.wait()
        for reader in readers:
            reader.join()
        for payload in _datagrams(b"".join(chunks)):
            counts["datagrams"] += 1
            counts["largest"] = max(counts["largest"], len(payload))
            counts["with_needle"] += needle in payload
            ids = {sid for sid, _, _ in submessages(payload)}
            counts["encrypted"] += SEC_BODY in ids
            counts["plain"] += bool(ids) and not ids & set(SEC_IDS)
            counts["signed_needle"] += _signed_needle(payload, needle)
        dropped = [int(line.split()[0]) for line in said if line.endswith("packets dropped by kernel")]
        Path(report).write_text(json.dumps({**counts, "dropped": dropped[0] if dropped else -1}))
    return code


if __name__ == "__main__":
    split = sys.argv.index("--")
    sys.exit(_main(sys.argv[1], sys.argv[2], sys.argv[split + 1:]))
