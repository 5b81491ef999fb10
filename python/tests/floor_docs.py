"""Floor documents (DIR/floor.json) for the tests of its reading and showing."""


def stats(p50):
    return {"count": 1000, "mean": p50, "min": p50 / 2, "max": p50 * 3, "p50": p50, "p90": p50, "p99": p50 * 2}


def floor(pub=0, sub=1, wait="block", entries=None, error=None):
    return {"cpu": {"pub": pub, "sub": sub, "placement": "cross-core" if pub != sub else "same-core"}, "wait": wait,
            "elapsed_s": 1.0, "error": error, "entries": entries if entries is not None else [
                {"kind": "memcpy", "method": "memcpy", "size": 64, "gbps": 90.0, "batch": 1024},
                {"kind": "shm", "method": "futex", "size": 64, "latency_us": stats(8.0), "rtt_us": stats(16.0)},
                {"kind": "unix", "method": "stream", "size": 64, "latency_us": stats(6.0), "rtt_us": stats(12.0)},
                {"kind": "udp", "method": "datagram", "size": 64, "latency_us": stats(9.0), "rtt_us": stats(18.0)},
                {"kind": "udp", "method": "datagram", "size": 70000, "skipped": "UDP carries at most 65507 bytes"}]}


def doc(*floors):
    return {"floor_version": 1, "time": "2026-01-01T00:00:00.000Z", "elapsed_s": 2.0, "budget_s": 0.1,
            "floors": list(floors) or [floor()]}


def where(size=64, pub=0, sub=1, wait="block"):
    """A point's cores, wait strategy and size, as FloorIndex looks them up."""
    return pub, sub, wait, size
