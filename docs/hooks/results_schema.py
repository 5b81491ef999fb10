"""MkDocs hook: the results schema page, made at build time from the schema itself.

``reference/results-schema.md`` holds the marker ``<!-- results-schema -->``; the
build replaces it with a table of every field of a result record (version 2, as
:func:`mwperf.model.schema.load_schema` gives it: the file's fields and the
fields the agent's option table adds), their types and what the schema says of
them, then the shapes several fields share (``$defs``). Nothing here is a copy:
a field added to the schema or a row added to the option table is on the page
at the next build. :func:`field_paths` is what python/tests/test_docs.py checks
the pages' field names against.
"""

from __future__ import annotations

from typing import Any, Iterator

MARKER = "<!-- results-schema -->"
PAGE = "reference/results-schema.md"


def _schema() -> dict:
    from mwperf.model.schema import load_schema

    return load_schema()


def _def_name(node: dict) -> str | None:
    ref = node.get("$ref")
    return ref.rsplit("/", 1)[1] if isinstance(ref, str) and ref.startswith("#/$defs/") else None


def _resolve(node: Any, schema: dict) -> dict:
    name = _def_name(node) if isinstance(node, dict) else None
    return schema["$defs"][name] if name else (node if isinstance(node, dict) else {})


def _children(node: dict, schema: dict) -> dict:
    """The named fields below a node (an object's, or an array's items')."""
    node = _resolve(node, schema)
    if "items" in node:
        node = _resolve(node["items"], schema)
    return node.get("properties") or {}


def field_paths(schema: dict | None = None) -> set[str]:
    """Every field of a record as a dotted path (``latency_us.p50``, ``cpu_s.pub.user``,
    ``qos.history``, ``per_subscriber.latency_us``, ...)."""
    schema = schema or _schema()
    out: set[str] = set()

    def walk(props: dict, prefix: str, depth: int) -> None:
        for name, node in props.items():
            path = prefix + name
            out.add(path)
            if depth < 6:
                walk(_children(node, schema), path + ".", depth + 1)

    walk(schema["properties"], "", 0)
    return out


def open_paths(schema: dict | None = None) -> set[str]:
    """Fields whose keys are free (an adapter's configuration, versions by library, ...)."""
    schema = schema or _schema()
    out: set[str] = set()

    def walk(props: dict, prefix: str, depth: int) -> None:
        for name, node in props.items():
            path = prefix + name
            target = _resolve(node, schema)
            target = _resolve(target.get("items", target), schema)
            if target.get("additionalProperties", True) is not False and \
                    ("object" in _types(target) or "properties" in target):
                out.add(path)
            if depth < 6:
                walk(_children(node, schema), path + ".", depth + 1)

    walk(schema["properties"], "", 0)
    return out


def _types(node: dict) -> list[str]:
    kind = node.get("type")
    return kind if isinstance(kind, list) else [kind] if kind else []


def _shape(node: dict, schema: dict) -> bool:
    """A shared shape with fields of its own (shown once, below the table), not a plain value."""
    return bool(_resolve(node.get("items", node), schema).get("properties"))


def _type(node: dict, schema: dict) -> str:
    """A node's type in a few words."""
    name = _def_name(node)
    if name:
        target = schema["$defs"][name]
        if _shape(target, schema):
            return f"[{name}](#{name})" + (" or null" if "null" in _types(target) else "")
        return _type(target, schema)
    if "enum" in node:
        return " / ".join("null" if v is None else f"`{v}`" for v in node["enum"])
    if "const" in node:
        return f"`{node['const']}`"
    for key in ("oneOf", "anyOf"):
        if key in node:
            return " or ".join(_type(n, schema) for n in node[key])
    kinds = _types(node)
    words = []
    for kind in kinds:
        if kind == "array" and "items" in node:
            words.append(f"array of {_type(node['items'], schema)}")
        elif kind != "null":
            words.append(kind)
    if node.get("format") == "date-time":
        words = ["date-time string"]
    text = " or ".join(words) or "any"
    return text + (" or null" if "null" in kinds else "")


def _cell(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split())


def _rows(props: dict, schema: dict, prefix: str, required: set[str], depth: int) -> Iterator[str]:
    for name, node in props.items():
        path = prefix + name
        what = _cell(node.get("description", "") if isinstance(node, dict) else "")
        if depth == 0 and name not in required:
            what = (what + " " if what else "") + "(absent from records written before it)"
        yield f"| `{path}` | {_cell(_type(node, schema))} | {what} |"
        if depth < 3 and not _def_name(node):
            target = node.get("items", node) if "array" in _types(node) else node
            inner = _resolve(target, schema)
            if inner.get("properties") and not _def_name(target):
                yield from _rows(inner["properties"], schema, path + ".", set(), depth + 1)


def render(schema: dict | None = None) -> str:
    """The generated part of the page, Markdown."""
    schema = schema or _schema()
    out = ["| field | type | meaning |", "|---|---|---|"]
    out += _rows(schema["properties"], schema, "", set(schema.get("required", [])), 0)
    used = {n for n in schema["$defs"] if _shape(schema["$defs"][n], schema)}
    out += ["", "## Shapes several fields share", ""]
    for name in sorted(used):
        node = schema["$defs"][name]
        out += [f"### {name}", "", _cell(node.get("description", "")) or f"`{name}`", ""]
        inner = _resolve(node.get("items", node), schema)
        out += ["| field | type | meaning |", "|---|---|---|"]
        out += _rows(inner.get("properties") or {}, schema, "", set(), 1)
        out.append("")
    return "\n".join(out)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:  # noqa: ARG001 - MkDocs' signature
    if page.file.src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        raise ValueError(f"{PAGE}: the marker {MARKER} is gone: the schema's fields would be missing")
    return markdown.replace(MARKER, render())
