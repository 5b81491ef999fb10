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
    alone = subprocess.run([agent, "discover", "--mw", "cyclonedds", "--participants", "2", "--index", "0",
                            "--timeout", "1000000"], input="go\nstop\n", capture_output=True, text=True, timeout=30)
    events += [json.loads(line) for line in alone.stdout.splitlines()]  # a participant alone: incomplete at once
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


# -- the site's pages and the README against the code (issue 40) -------------------------------

def _hook(name: str):
    """A module of docs/hooks/ (the code the site's build runs), imported from its file."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"docs_hook_{name}", ROOT / "docs" / "hooks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ROOT = Path(__file__).resolve().parents[2]

#: Flags of other programs the pages name, with whose they are.
FOREIGN = {"--dist": "pytest-xdist's (make test-side)", "--strict": "mkdocs build's (make docs)"}

_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*")


def known_flags() -> set[str]:
    """Every flag of mwperf's command line (its parsers, every command), of the agent (its option
    table, every command) and of the bench scripts (their parsers)."""
    import argparse

    from mwperf.cli.main import build_parser

    flags = {f"--{row.name}" for row in snapshot().rows}

    def walk(parser) -> None:
        for action in parser._actions:
            flags.update(s for s in action.option_strings if s.startswith("--"))
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    walk(sub)

    walk(build_parser())
    for script in (ROOT / "bench").glob("*.py"):
        flags.update(re.findall(r"add_argument\(\s*[\"'](--[a-z0-9-]+)", script.read_text(encoding="utf-8")))
    return flags | set(FOREIGN)


def unknown_flags(text: str, known: set[str]) -> list[str]:
    return sorted({flag for flag in _FLAG.findall(text) if flag not in known})


#: A field's name ends with its unit.
_UNIT = re.compile(r"^[a-z][a-z0-9_]*_(us|ms|s|kb|hz|pct|mbit|msg)$")
_DOTTED = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$")

#: A span that names a file, not a field (`fanout.yaml`, `results.jsonl`).
_FILE = re.compile(r"\.(ya?ml|jsonl?|md|py|csv|html|txt|svg|png|toml|cpp|h|i64|parquet|duckdb|xml|cmake|sh)$")


def not_fields() -> set[str]:
    """Names with a unit that are no record field: the keys of the agent's events, which
    docs/agent-protocol.md documents (and test_every_event_key_is_in_the_document_and_no_other
    keeps true against a real agent)."""
    return {key for keys in documented().values() for key in keys}


def unknown_fields(text: str, paths: set[str], open_paths: set[str]) -> list[str]:
    """The names in code spans that read as record fields and are not in the schema: a dotted
    name whose first part is a record field (``latency_us.p51``), or a name that ends with a
    unit (``discovery_us``) that no field of any depth has."""
    tops = {p for p in paths if "." not in p}
    leaves = {p.rsplit(".", 1)[-1] for p in paths} | not_fields()
    bad = set()
    for span in re.findall(r"`([^`\n]+)`", text):
        if _FILE.search(span):
            continue
        if _DOTTED.match(span) and span.split(".")[0] in tops:
            if span not in paths and not any(span.startswith(o + ".") for o in open_paths):
                bad.add(span)
        elif _UNIT.match(span) and span not in leaves:
            bad.add(span)
    return sorted(bad)


def _pages() -> list[Path]:
    from test_readme_examples import pages

    return pages()


def test_no_page_names_a_flag_that_does_not_exist():
    known = known_flags()
    bad = {p.relative_to(ROOT).as_posix(): unknown_flags(p.read_text(encoding="utf-8"), known) for p in _pages()}
    bad = {page: flags for page, flags in bad.items() if flags}
    assert not bad, f"flags no parser or option table knows: {bad}"


def test_no_page_names_a_record_field_that_does_not_exist():
    schema = _hook("results_schema")
    paths, open_paths = schema.field_paths(), schema.open_paths()
    bad = {p.relative_to(ROOT).as_posix(): unknown_fields(p.read_text(encoding="utf-8"), paths, open_paths)
           for p in _pages()}
    bad = {page: fields for page, fields in bad.items() if fields}
    assert not bad, f"record fields the schema does not have: {bad}"


def test_a_planted_flag_or_field_is_found():
    """The checks above against names planted in a page: each is found, and the real ones are not."""
    known = known_flags()
    page = ("Use `--reliability reliable` and `--no-such-flag`; `mwperf run --mw udp --wtach spin`.\n"
            "Read `latency_us.p50`, `latency_us.p51`, `adapter.config.linger_ms`, `cpu_s.pub.user`, "
            "`cpu_s.pub.usr`, `discovery_ms`, `discovery_us`, `fanout.yaml`, `maxrss_kb`.\n| `--mw` |\n|---|\n")
    assert unknown_flags(page, known) == ["--no-such-flag", "--wtach"]
    schema = _hook("results_schema")
    assert unknown_fields(page, schema.field_paths(), schema.open_paths()) == \
        ["cpu_s.pub.usr", "discovery_us", "latency_us.p51"]


def test_the_schema_page_is_the_schema():
    """The page holds the marker the build replaces, and what replaces it names every field of
    the schema (a field added to the schema, or an option added to the table, is on the page)."""
    schema = _hook("results_schema")
    page = (ROOT / "docs" / schema.PAGE).read_text(encoding="utf-8")
    assert schema.MARKER in page
    rendered = schema.render()
    named = set(re.findall(r"^\| `([a-z0-9_.]+)` \|", rendered, re.M))
    from mwperf.model.schema import load_schema

    assert set(load_schema()["properties"]) <= named
    assert {"qos.history", "latency_us", "cpu.placement", "adapter.versions"} <= named
    assert {f"`{row.record}`" for row in snapshot().record_rows} <= {f"`{n}`" for n in named}


def test_every_middleware_has_a_page_made_from_its_description():
    adapters = _hook("adapters")
    recorded, _ = adapters.described()
    marked: dict[str, str] = {}
    for page in (ROOT / "docs" / "middleware").glob("*.md"):
        for name in adapters.MARKER.findall(page.read_text(encoding="utf-8")):
            marked[name] = page.name
    assert set(marked) == set(recorded), "a middleware page per adapter, each with its <!-- adapter: NAME --> table"
    table = adapters.render("cyclonedds")
    assert "`--whc-high`" in table and "`--async`" not in table  # the capability's options, not every QoS option


def test_the_readme_links_exist():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = [t.split("#")[0] for t in re.findall(r"\]\(([^)\s]+)\)", text) if not t.startswith(("http", "#"))]
    missing = [t for t in targets if not (ROOT / t).exists()]
    assert targets and not missing, f"README links to files that do not exist: {missing}"


def test_the_readme_tour_table_is_what_mwperf_made(tmp_path):
    """The README's table is the headline `mwperf report --format md` prints for the run
    committed in docs/assets/tour (a copy: report writes into its directory)."""
    import shutil
    import sys

    shutil.copytree(ROOT / "docs" / "assets" / "tour", tmp_path / "tour")
    out = subprocess.run([sys.executable, "-m", "mwperf", "report", str(tmp_path / "tour"), "--format", "md"],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    headline = out[out.index("### headline"):].split("\n\n")[1].strip().splitlines()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("<!-- tour-table:"):].split("\n\n")[0].splitlines()[1:]
    assert headline and table == headline
