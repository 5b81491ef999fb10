"""MkDocs hook: what each middleware page's adapter honours, from the agent's own description.

A page holds ``<!-- adapter: NAME -->``; the build replaces it with a table made from the
agent's ``list`` as recorded in python/tests/fixtures/agent-list.jsonl (a test keeps that
recording equal to the built agent's): its version there, transports, reliability, the options
its capabilities let through (the option table's ``capability`` column), receive paths, limits
and why, where it runs, what it may leave behind and its helper service. A capability added to
an adapter is on its page at the next build; nothing here is a copy.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT / "python" / "tests" / "fixtures" / "agent-list.jsonl"
MARKER = re.compile(r"<!-- adapter: ([a-z0-9-]+) -->")

#: Capabilities whose choices are shown in rows of their own.
_CHOICES = ("transport", "reliability", "receive", "wait")


def described() -> tuple[dict[str, dict], list[dict]]:
    """The recorded adapters by name, and the option table's rows."""
    adapters: dict[str, dict] = {}
    options: list[dict] = []
    for line in RECORDED.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event.get("event") == "adapter":
            adapters[event["name"]] = event
        elif event.get("event") == "options":
            options = event["options"]
    return adapters, options


def _size(n: int) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def _choices(values: list[str], default: str | None) -> str:
    shown = [f"`{v}`" + (" (default)" if v == default else "") for v in values]
    if default and default not in values:
        shown.insert(0, f"`{default}` (default)")
    return ", ".join(shown)


def _cell(text: str) -> str:
    return " ".join(str(text).replace("|", "\\|").split())


def render(name: str) -> str:
    adapters, options = described()
    if name not in adapters:
        raise ValueError(f"no adapter '{name}' in {RECORDED.relative_to(ROOT)}")
    a = adapters[name]
    caps, defaults, limits = a.get("capabilities") or {}, a.get("defaults") or {}, a.get("limits") or {}
    notes = a.get("limit_notes") or {}
    gated = sorted({f"`--{o['name']}`" for o in options
                    if o.get("capability") in caps and o.get("capability") not in _CHOICES})
    rows = [("version (as recorded)", f"`{a.get('version')}`")]
    for cap in _CHOICES:
        if cap in caps:
            rows.append((f"`--{cap}`", _choices(caps[cap], defaults.get(cap))))
    rows.append(("other options it honours", ", ".join(gated) or "none"))
    size = limits.get("max_size")
    if size:
        rows.append(("largest message", _size(size) + (f": {_cell(notes['max_size'])}" if "max_size" in notes else "")))
    subs = limits.get("max_subscribers")
    rows.append(("subscribers (`--subscribers`)", "any number" if not subs else f"at most {subs}"))
    per_process = limits.get("max_readers_per_process")
    if per_process:
        why = f": {_cell(notes['max_readers_per_process'])}" if "max_readers_per_process" in notes else ""
        rows.append(("readers per process (`--subscribers-as threads`)", f"at most {per_process}{why}"))
    rows.append(("hosts", "this host only" if a.get("hosts") == "one" else "one host, namespaces or two hosts"))
    if a.get("remote_transport"):
        rows.append(("transport between hosts", f"`{a['remote_transport']}`"))
    if a.get("service"):
        rows.append(("helper service", f"`{a['service']}` (started by the controller, kept across a run's points)"))
    if a.get("leftovers"):
        rows.append(("what it may leave (removed after every run)", ", ".join(f"`{g}`" for g in a["leftovers"])))
    if a.get("notes"):
        rows.append(("notes", _cell(a["notes"])))
    if a.get("license"):
        rows.append(("licence", _cell(a["license"])))
    return "\n".join(["| | |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows)])


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:  # noqa: ARG001 - MkDocs' signature
    return MARKER.sub(lambda m: render(m.group(1)), markdown)
