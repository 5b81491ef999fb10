"""Clock offset between the publisher's and the subscriber's hosts, estimated
over the control channel (NTP-style: the controller asks each host's agent for
its clock ``EXCHANGES`` times; the exchange with the smallest round trip
wins; its half round trip bounds the error). Offset = subscriber clock -
publisher clock; uncertainty = the sum of both sides' bounds.

One-way latency measured across two clocks is only as good as that estimate:
a rate-mode point whose uncertainty exceeds 10 % of its p50 is flagged. On
namespace hosts both sides read the same clock, so the estimate must come out
near zero (recorded, never applied). Between two monotonic clocks the
subscriber subtracts the offset from every one-way sample and the record
carries the uncertainty; a realtime clock (``--clock realtime``, hosts
synchronised by PTP or chrony) is trusted, its estimate recorded as a check.
Ping-pong (RTT/2) needs no common clock.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time

__all__ = ["EXCHANGES", "side_offset", "estimate", "sync_status"]

EXCHANGES = 50


def side_offset(argv: list[str], exchanges: int = EXCHANGES, timeout: float = 10.0,
                kind: str = "monotonic") -> tuple[int, int]:
    """(offset of that agent's clock from ours, half the smallest round trip), ns;
    ``argv`` runs ``mwperf-agent clock`` where that side runs; ``kind`` is
    monotonic or realtime."""
    ours = time.monotonic_ns if kind == "monotonic" else time.time_ns
    field = "mono_ns" if kind == "monotonic" else "real_ns"
    with tempfile.TemporaryFile() as errors:  # what ssh (or the agent) says when it fails
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=errors, text=True, bufsize=1)
        assert proc.stdin is not None and proc.stdout is not None  # both piped
        best: tuple[int, int] | None = None
        deadline = time.monotonic() + timeout
        try:
            for _ in range(exchanges):
                t0 = ours()
                try:
                    proc.stdin.write("t\n")
                    proc.stdin.flush()
                except OSError:
                    pass  # gone: its reason is on stderr
                line = proc.stdout.readline()
                t1 = ours()
                if not line or time.monotonic() > deadline:
                    raise OSError(f"clock exchange with '{' '.join(argv[-1:])}' failed{_reason(proc, errors)}")
                try:
                    theirs = int(json.loads(line)[field])
                except (ValueError, KeyError, TypeError):
                    raise OSError(f"clock exchange with '{' '.join(argv[-1:])}': not a clock reading: "
                                  f"{line.strip()[:80]!r}") from None
                rtt = t1 - t0
                if best is None or rtt < best[1] * 2:
                    best = (theirs - (t0 + t1) // 2, rtt // 2)
        finally:
            try:
                proc.stdin.close()
            except OSError:
                pass
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    assert best is not None
    return best


def _reason(proc: subprocess.Popen, errors) -> str:
    """': <its last stderr line>' (ssh's own reason: refused, unknown host, key), or its exit."""
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    errors.seek(0, 2)
    errors.seek(max(errors.tell() - 4096, 0))
    lines = [line.strip() for line in errors.read().decode(errors="replace").splitlines() if line.strip()]
    if lines:
        return f": {lines[-1]}"
    return f": exit {proc.returncode}" if proc.returncode else ""


def sync_status() -> dict:
    """Which time-synchronisation daemons run here (ptp4l, phc2sys, chronyd, ntpd)."""
    running = {}
    for name in ("ptp4l", "phc2sys", "chronyd", "ntpd", "systemd-timesyncd"):
        running[name] = shutil.which("pgrep") is not None and subprocess.run(
            ["pgrep", "-x", name], capture_output=True).returncode == 0
    return running


def estimate(pub_argv: list[str], sub_argv: list[str], same_clock: bool, exchanges: int = EXCHANGES,
             kind: str = "monotonic", sync: dict | None = None) -> dict:
    """The record's ``clock`` object (µs); ``sync``: what the hosts said of their synchronisation daemons
    (two real hosts: each asked, :mod:`mwperf.hosts.probe`), else this host's (:func:`sync_status`)."""
    offsets = []
    for role, argv in (("pub", pub_argv), ("sub", sub_argv)):
        try:
            offsets.append(side_offset(argv, exchanges, kind=kind))
        except OSError as exc:
            raise OSError(f"{role} host: {exc}") from None
    (pub_off, pub_err), (sub_off, sub_err) = offsets
    return {
        "offset_us": (sub_off - pub_off) / 1000.0,
        "uncertainty_us": (pub_err + sub_err) / 1000.0,
        "method": "control channel, min round trip of {} exchanges".format(exchanges),
        "same_clock": same_clock,
        "sync": sync_status() if sync is None else sync,
    }
