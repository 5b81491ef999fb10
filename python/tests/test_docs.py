"""docs/agent-protocol.md against the agent: every option of its table (the
published ``options`` event) is a row of the document's option table, as the
table says it, and every key of every event a real agent emits is named in
the document, and no key is named that the agent does not emit."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import real_agent_path
from mwperf.table import Row, snapshot

DOC = Path(__file__).resolve().parents[2] / "docs" / "agent-protocol.md"


def option_line(row: Row) -> str:
    """The document's line of an option."""
    default = "-" if row.default is None else json.dumps(row.default)
    kind = f"{row.kind} ({row.unit})" if row.unit else row.kind
    where = [] if len(row.modes) == 4 else [" ".join(row.modes) + " mode"]
    where += [] if len(row.roles) == 2 else [f"{row.roles[0]} only"]
    if row.command != "run":
        where.append(row.command)
    if row.pair:
        where.append("pair")  # may change between the points of one agent pair (`next`)
    gate = f"`{row.capability}`" if row.capability else "-"
    record = f"`{row.record}`" if row.record else "-"
    return (f"| `--{row.name}` | {kind} | {default} | {', '.join(where) or 'all'} | {gate} | {record} "
            f"| {row.help} |")


def doc_text() -> str:
    return DOC.read_text(encoding="utf-8")


def test_every_option_is_in_the_document_as_the_table_says():
    lines = [line for line in doc_text().splitlines() if line.startswith("| `--")]
    assert lines == [option_line(row) for row in snapshot().rows], \
        "docs/agent-protocol.md's option table differs from the agent's (print option_line(row) for each row)"


# -- events ------------------------------------------------------------------------

def documented() -> dict[str, set[str]]:
    """``- `kind` (role): `key`, `key`, ...`` lines: what the document says each event carries."""
    out: dict[str, set[str]] = {}
    for match in re.finditer(r"^- `([a-z_]+)`(?: \(([a-z/ ]+)\))?: (.+)$", doc_text(), re.M):
        kind, role, keys = match.groups()
        out.setdefault(f"{kind}/{role}" if role else kind, set()).update(re.findall(r"`([a-z0-9_]+)`", keys))
    return out


#: Objects nested in events, documented by the name of the object kind.
NESTED = {"latency_ns": "statistics", "rtt_ns": "statistics", "send_lag_ns": "statistics",
          "burst_first_ns": "statistics", "burst_last_ns": "statistics", "convergence": "look",
          "last_look": "look", "timing": "timing", "limits": "limits", "defaults": None, "capabilities": None,
          "limit_notes": None, "adapter_config": None, "batch_ns": "statistics"}


def collect(agent: str, tmp: Path) -> dict[str, set[str]]:
    """The keys of the events of real points (each mode, adaptive, fan-out as threads) and commands."""
    env = dict(os.environ, MWPERF_RUN_ID="4321")
    events: list[dict] = []

    def point(mode, pub=(), sub=(), mw="udp", duration="400000000"):
        s = subprocess.Popen([agent, "run", "--role", "sub", "--mw", mw, "--mode", mode, "--size", "64",
                              "--samples-out", str(tmp / f"{mode}.i64"), *sub],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        ready = json.loads(s.stdout.readline())
        ports = ",".join(str(p) for p in ready["ports"])
        p = subprocess.run([agent, "run", "--role", "pub", "--mw", mw, "--mode", mode, "--size", "64", "--port", ports,
                            "--duration", duration, "--warmup", "50000000", "--samples-out", str(tmp / "p.i64"),
                            *pub], input="go\n", capture_output=True, text=True, env=env, timeout=60)
        pub_events = [json.loads(line) for line in p.stdout.splitlines()]
        sent = next(e for e in pub_events if e["event"] == "result")["sent"]
        out, _ = s.communicate(f"stop {sent}\n", timeout=30)
        events.extend(pub_events + [ready] + [json.loads(line) for line in out.splitlines()])

    point("latency", ("--precision", "0.9"), duration="1500000000")  # a look after 500 ms
    point("throughput", ("--latency-count", "100"))
    point("rate", ("--rate", "2000"), ("--precision", "0.9"), duration="1500000000")
    point("burst", ("--demand", "5"))
    point("rate", ("--rate", "1000", "--subscribers", "2"), ("--subscribers", "2", "--subscribers-as", "threads"),
          mw="tcp" if "cyclonedds" not in subprocess.run([agent, "list"], capture_output=True, text=True).stdout
          else "cyclonedds")
    # an agent pair (--reuse): a second point on the same agents (`next`)
    s = subprocess.Popen([agent, "run", "--role", "sub", "--mw", "udp", "--mode", "rate", "--size", "64",
                          "--reuse", "128"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    ready = json.loads(s.stdout.readline())
    timing = ["--rate", "1000", "--duration", "100000000", "--warmup", "10000000"]
    p = subprocess.Popen([agent, "run", "--role", "pub", "--mw", "udp", "--mode", "rate", "--size", "64", "--reuse", "128",
                          "--port", str(ready["port"]), *timing], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True, env=env)
    events.append(ready)
    for point in range(2):
        if point:
            s.stdin.write("next --size 128\n")
            s.stdin.flush()
            p.stdin.write("next --size 128 " + " ".join(timing) + "\n")
            p.stdin.flush()
        events += [json.loads(s.stdout.readline()), json.loads(p.stdout.readline())]  # matched, ready
        p.stdin.write("go\n")
        p.stdin.flush()
        events.append(json.loads(p.stdout.readline()))
        s.stdin.write(f"stop {events[-1]['sent']}\n")
        s.stdin.flush()
        events.append(json.loads(s.stdout.readline()))
    s.communicate("close\n", timeout=10)
    p.communicate("close\n", timeout=10)
    for command in (["list"], ["version"], ["wakeup", "--cpus", "0,0", "--iterations", "100"], ["cleanup"],
                    ["floor", "--sizes", "64,70000", "--kinds", "memcpy,udp", "--budget", "2000000"]):
        events += [json.loads(line) for line in subprocess.run([agent, *command], capture_output=True, text=True,
                                                               timeout=60).stdout.splitlines()]
    clock = subprocess.run([agent, "clock"], input="x\n", capture_output=True, text=True, timeout=10)
    events += [json.loads(line) for line in clock.stdout.splitlines()]
    error = subprocess.run([agent, "run", "--role", "sub", "--mw", "tcp", "--host", "203.0.113.1"],
                           capture_output=True, text=True, timeout=10)
    events += [json.loads(line) for line in error.stdout.splitlines()]
    seen: dict[str, set[str]] = {}
    for event in events:
        kind = event["event"] + (f"/{event['role']}" if "role" in event and event["event"] != "error" else "")
        seen.setdefault(kind, set()).update(event)
        for key, value in event.items():
            if isinstance(value, dict) and NESTED.get(key):
                seen.setdefault(NESTED[key], set()).update(value)
    return seen


@pytest.mark.e2e  # apart: `mwperf-agent cleanup` removes what any killed run left on the machine
def test_every_event_key_is_in_the_document_and_no_other(tmp_path):
    agent = real_agent_path()
    if agent is None:
        pytest.skip("the agent binary is not built yet")
    seen, doc = collect(str(agent), tmp_path), documented()
    for kind, keys in seen.items():
        assert kind in doc, f"the document says nothing of the {kind} event"
        assert keys <= doc[kind], f"{kind}: not in the document: {sorted(keys - doc[kind])}"
    for kind, keys in doc.items():
        optional = set(re.findall(r"`([a-z0-9_]+)`", OPTIONAL.get(kind, "")))
        assert keys - optional <= seen.get(kind, set()), f"{kind}: the agent does not emit {sorted(keys - optional - seen.get(kind, set()))}"


#: Keys an event carries only under conditions the test does not set up.
OPTIONAL = {"result/pub": "`samples_error`", "result/sub": "`samples_error`, `per_publisher` (--publishers N), `payload_matched`, "
                                                        "`payload_mismatched` (--check-payload)", "statistics": "`uncertainty_us`",
            "converged/sub": "`event`, `role`, `after_ns` (as soon as it converges: not in so short a point)",
            "look": "`rate`, `loss` (a throughput point's)", "adapter": "`license` (connext's, where it is built)"}
