"""A stand-in for mwperf-agent that follows docs/agent-protocol.md.

Only for testing the controller's mechanics (deadlines, failures, process
clean-up); the end-to-end tests use the real agent. No data is moved: the
results are canned.

Faults are injected through the environment:

* ``FAKE_AGENT_FAULT`` = ``ROLE-FAULT`` (e.g. ``sub-hang-start``) where FAULT is
  ``hang-start`` (never says ready), ``hang-match`` (sub: ready, never
  matched), ``hang-result`` (pub: never sends its
  result; sub: ignores 'stop'), ``error`` (error event, exit 3),
  ``crash`` (stderr line, exit 1, no event), ``kill`` (SIGKILL itself
  after ready), ``child`` (leaves a sleeping child in its process group),
  ``bad-exit`` (result, then exit 5), ``portless`` (sub: ready without a
  port, like a DDS adapter), ``deaf`` (sub: receives nothing; pub: no pong),
  ``garbled`` (sub: a result the record schema refuses, a thread's negative CPU time),
  ``spoofed`` (sub: more received than sent, a sequence number past the last),
  ``spoofed-seq`` (sub: a sequence number past the last only),
  ``twice`` (sub, as threads: every reader's result says it is reader 0),
  ``overrun`` (pub: writes until told ``stop``, as a burst longer than the run);
* ``FAKE_AGENT_FAULT_SIZE`` = only fault for this --size;
* ``FAKE_AGENT_SPREAD`` = S: each launch's latency off by up to S (a share), by its number (counted in the
  file ``FAKE_AGENT_SPREAD_FILE``): consecutive launches differ;
* ``FAKE_AGENT_LOG`` = append each run's argv, pid, the key it read on stdin
  (``--key stdin``) and its MWPERF_* environment (JSON) to this file.

``list`` prints what the real agent printed (``fixtures/agent-list.jsonl``,
which a test keeps equal to the real agent's description), with its
udp, tcp and the cyclonedds entry renamed ``dds``: a DDS-like adapter whose
results echo the QoS options back as its ``adapter_config``.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

LIST_FIXTURE = Path(__file__).resolve().parent / "fixtures" / "agent-list.jsonl"


def emit(event):
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def parse(argv):
    opts = {}
    i = 0
    while i < len(argv):
        if argv[i].startswith("--") and i + 1 < len(argv):
            opts[argv[i][2:]] = argv[i + 1]
            i += 2
        else:
            i += 1
    return opts


def _launch_number() -> int:
    """How many launches came before this one (counted in $FAKE_AGENT_SPREAD_FILE)."""
    path = Path(os.environ["FAKE_AGENT_SPREAD_FILE"])
    number = int(path.read_text()) if path.exists() else 0
    path.write_text(str(number + 1))
    return number


def stats(base):
    return {"count": 100, "mean": base * 1.1, "std": base * 0.1, "min": base // 2, "max": base * 3,
            "p50": base, "p90": base + 100, "p99": base + 200, "p9999": None, "p999999": None,
            "relative_error": 0.000977, "p50_ci": None, "p99_ci": None, "ci_confidence": 0.95, "ci_batches": 0}


def description():
    """The real agent's `list` lines: udp, tcp, and cyclonedds as `dds`."""
    events = [json.loads(line) for line in LIST_FIXTURE.read_text().splitlines() if line.strip()]
    out = []
    for event in events:
        if event.get("event") == "adapter":
            if event.get("name") not in ("udp", "tcp", "cyclonedds"):
                continue
            name = "dds" if event["name"] == "cyclonedds" else event["name"]
            event = {**event, "name": name, "version": "fake 0.1" if name == "dds" else "fake 1.0"}
        out.append(event)
    return out


ADAPTERS = [e for e in description() if e.get("event") == "adapter"]


def adapter_config(opts):
    """What a DDS-like adapter reports as in force: the options, else defaults."""
    if opts.get("mw") != "dds":
        return {"so_rcvbuf": 8388608}
    return {"reliability": opts.get("reliability", "reliable"), "durability": opts.get("durability", "volatile"),
            "history": opts.get("history", "keep-last:10"), "instances": int(opts.get("instances", 0)),
            "receive": opts.get("receive", "listener"), "domain": 0}


def common(role, opts):
    default = next((a for a in ADAPTERS if a["name"] == opts.get("mw")), ADAPTERS[0])["defaults"]
    config = adapter_config(opts)
    return {"event": "result", "role": role, "mw": opts.get("mw"), "mode": opts.get("mode"),
            "size": int(opts.get("size", 32)), "wait": opts.get("wait", "block"), "clock": "monotonic",
            "cpu_affinity": [int(opts.get("cpu", 0))] if opts.get("cpu", "-1") != "-1" else [0, 1],
            "elapsed_ns": 1_000_000_000, "cpu_user_ns": 1_000_000, "cpu_sys_ns": 2_000_000,
            "cpu_window_ns": 1_000_000_000, "maxrss_kb": 4000, "adapter_version": "fake 1.0", "foreign": 0,
            "adapter_config": config, "transport": opts.get("transport", default["transport"]),
            "reliability": opts.get("reliability", default["reliability"]),
            "receive": opts.get("receive", default.get("receive", "")), "own_kb": 600, "rss_before_open_kb": 1000}


def hang():
    while True:
        time.sleep(3600)


def main():
    argv = sys.argv[1:]
    if not argv:
        sys.stderr.write("fake-agent: no command\n")
        return 2
    command = argv[0]
    if command == "version":
        emit({"event": "version", "version": "9.9.9-fake", "build_type": "Release"})
        return 0
    if command == "list":
        for event in description():
            emit(event)
        return 0
    if command == "cleanup":
        for event in ADAPTERS:
            emit({"event": "cleaned", "mw": event["name"], "removed": []})
        return 0
    if command == "wakeup":
        cpus = [int(c) for c in parse(argv[1:]).get("cpus", "0,1").split(",")]
        p50 = 2000 if cpus[0] == cpus[1] else 20000
        emit({"event": "wakeup", "cpus": cpus, "iterations": 100, "rtt_ns": stats(p50 * 2),
              "wakeup_p50_ns": p50, "wakeup_p99_ns": p50 * 2})
        return 0
    if command != "run":
        return 2

    opts = parse(argv[1:])
    role = opts["role"]
    key = None
    if opts.get("key") == "stdin":  # the run's key: the first control line
        line = sys.stdin.readline().split()
        if len(line) != 2 or line[0] != "key" or len(line[1]) != 32:
            emit({"event": "error", "role": role, "error": f"fake: expected 'key HEX', got {line!r}"})
            return 3
        key = line[1]
    if os.environ.get("FAKE_AGENT_LOG"):
        with open(os.environ["FAKE_AGENT_LOG"], "a") as log:
            log.write(json.dumps({"pid": os.getpid(), "argv": argv, "key": key,
                                  "env": {k: v for k, v in os.environ.items() if k.startswith("MWPERF")}}) + "\n")
    fault = os.environ.get("FAKE_AGENT_FAULT", "")
    only_size = os.environ.get("FAKE_AGENT_FAULT_SIZE")
    if only_size and opts.get("size") != only_size:
        fault = ""
    mine = fault[len(role) + 1:] if fault.startswith(role + "-") else ""

    if mine == "child":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if os.environ.get("FAKE_AGENT_LOG"):
            with open(os.environ["FAKE_AGENT_LOG"], "a") as log:
                log.write(json.dumps({"pid": child.pid, "child_of": os.getpid()}) + "\n")
    if mine == "hang-start":
        hang()
    if mine == "error":
        emit({"event": "error", "role": role, "error": f"fake: {role} adapter setup failed"})
        sys.stderr.write("fake-agent: setup failed\n")
        return 3
    if mine == "crash":
        sys.stderr.write(f"fake-agent: {role} crashed\n")
        return 1

    sent = 1000
    if role == "sub":
        # --subscribers N --subscribers-as threads: N readers in this process, one result each
        readers = int(opts.get("subscribers", "1")) if opts.get("subscribers-as") == "threads" else 1
        index = int(opts.get("subscriber-index", "0"))
        port = 40000 + os.getpid() % 1000
        ready = {"event": "ready", "role": "sub", "mw": opts["mw"], "port": port,
                 "ports": [port + 1000 * i for i in range(readers)], "readers": readers,
                 "pid": os.getpid(), "cpu_affinity": [int(opts.get("cpu", 1))]}
        if mine == "portless":  # DDS-like: discovery, no port
            del ready["port"]
            ready["ports"] = [0] * readers
        emit(ready)
        if mine == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if mine == "hang-match":
            hang()
        emit({"event": "matched", "role": "sub", "readers": readers})
        line = sys.stdin.readline()
        if mine == "hang-result":
            hang()
        parts = line.split()
        # 'stop S' or, with --publishers N, 'stop S0,S1,...' (each publisher's count): what they sent together
        counts = [int(c) for c in parts[1].split(",")] if len(parts) == 2 and parts[0] == "stop" else [-1]
        known = -1 if min(counts) < 0 else sum(counts)
        received = sent if known < 0 else known
        if mine == "deaf":
            received = 0
        span = max(counts) if known >= 0 else received  # each publisher's sequence numbers 0 .. its sent - 1
        if mine.startswith("spoofed"):  # what another sender's datagrams do: more than sent, numbers past the last
            received, span = received + (463 if mine == "spoofed" else 0), 10**9 + 1
        for reader in reversed(range(readers)):  # the controller orders them by "reader"
            result = common("sub", opts)
            result.update({"received": received, "seq_span": span,
                           "lost": max(known - received, 0) if known >= 0 else 0,
                           "duplicates": 0, "out_of_order": 0, "warmup_received": 10,
                           "first_rx_ns": 1, "last_rx_ns": 1_000_000_001, "rx_elapsed_ns": 1_000_000_000,
                           "samples_per_s": float(received), "clock_offset_ns": int(opts.get("clock-offset", 0)),
                           "latency_ns": stats(5000 + 100 * reader) if opts["mode"] != "latency" else None,
                           "echo": index + reader == 0, "reader": 0 if mine == "twice" else reader,
                           "readers": readers, "cpu_scope": "process"})
            if mine == "garbled":
                result["threads"] = [{"name": "x", "cpu_ns": -52000, "threads": 1, "own": False}]
            emit(result)
        return 5 if mine == "bad-exit" else 0

    # publisher
    emit({"event": "ready", "role": "pub", "mw": opts["mw"], "pid": os.getpid(),
          "cpu_affinity": [int(opts.get("cpu", 0))], "discovery_ns": 150000})
    if mine == "kill":
        time.sleep(0.1)
        os.kill(os.getpid(), signal.SIGKILL)
    line = sys.stdin.readline()  # the start barrier: "go" (EOF: nothing to wait for)
    if line and line.split() != ["go"]:
        emit({"event": "error", "role": "pub", "error": f"fake: expected 'go', got {line.strip()!r}"})
        return 3
    if mine == "hang-result":
        hang()
    if mine == "overrun":  # a burst that outlasts the run: goes on until told to stop
        line = sys.stdin.readline()
        if line.split() != ["stop"]:
            hang()
    time.sleep(min(0.2, int(opts.get("duration", 5_000_000_000)) / 1e9))
    rate = float(opts.get("rate", 0))
    result = common("pub", opts)
    scheduled = sent + 3 if opts["mode"] == "rate" else None  # a publisher that fell 3 samples behind
    result.update({"sent": sent, "warmup_sent": 10, "scheduled": scheduled,
                   "unsent": scheduled - sent if scheduled else None, "send_timeouts": 0,
                   "achieved_hz": rate * sent / scheduled if scheduled else 1000.0,
                   "rate_hz": rate, "pongs": sent if opts["mode"] != "rate" and mine != "deaf" else 0,
                   "ping_sent": sent,
                   "ping_lost": 0, "discovery_ns": 150000})
    if opts["mode"] != "rate":
        spread = float(os.environ.get("FAKE_AGENT_SPREAD") or 0)
        level = 1 + spread * ((_launch_number() % 7) - 3) / 3 if spread else 1.0
        result.update({"rtt_ns": stats(int(20000 * level)), "latency_ns": stats(int(10000 * level))})
    else:
        result.update({"rtt_ns": None, "latency_ns": None, "send_lag_ns": stats(3000)})
    emit(result)
    # as the agent: its endpoints stay until the controller closes it (`close` or EOF), after the subscribers' results
    while (line := sys.stdin.readline()) and line.split() != ["close"]:
        pass
    return 5 if mine == "bad-exit" else 0


if __name__ == "__main__":
    sys.exit(main())
