"""The result-record JSON Schemas (``result-v2.json``, which mwperf writes,
and ``result-v1.json``, which it reads and upgrades; draft 2020-12).

Version 2's option fields (``mw``, ``size``, ``qos.history``, ...) are not
written in its file: :func:`load_schema` adds them from the agent's option
table (:mod:`mwperf.table`), each with its record name, type and choices,
so that a new option is a field of the record by being a row of the table.

Two checkers of one schema:

* :func:`validate_record` / :func:`record_errors`: jsonschema itself, with
  messages; every record is checked by it before it is written;
* :func:`record_ok`: the same schema compiled into plain Python checks
  (about 30 times quicker than jsonschema), for reading: a run directory is
  untrusted input and every record read is checked, so a report of a large
  run must not spend its time in the validator. It implements the keywords
  the schema uses; a schema with any other keyword falls back to jsonschema
  (a test keeps the two in agreement).

jsonschema is imported when the first record is checked, not with the
package: the command line, which reaches this through the run directory,
stays quick to start."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import resources
from typing import Any, Callable, cast

from mwperf.errors import SchemaError
from mwperf.table import Row, snapshot

__all__ = ["load_schema", "validate_record", "record_errors", "record_ok", "compile_schema", "SCHEMA_VERSIONS",
           "option_schema"]

#: The schema versions this mwperf reads (the last is the one it writes).
SCHEMA_VERSIONS = (1, 2)
_HISTORY = "^(keep-all|keep-last:[1-9][0-9]*)$"


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    if "enum" in node:
        return {**node, "enum": [*node["enum"], None]}
    return {**node, "type": [node["type"], "null"]}


def option_schema(row: Row) -> dict[str, Any]:
    """The schema of an option's record field, from its kind and choices:
    null where it may not apply (every field of the point that needs no
    capability and applies to every mode is always there)."""
    if row.kind == "choice" and row.choices:
        node: dict[str, Any] = {"enum": list(row.choices)}
    elif row.kind == "choice" or row.kind == "text":
        node = {"type": "string", "minLength": 1}
    elif row.kind == "history":
        node = {"type": "string", "pattern": _HISTORY}
    elif row.kind == "flag":
        node = {"type": "boolean"}
    elif row.kind in ("bytes", "count"):
        node = {"type": "integer", "minimum": 0}
    elif row.kind == "integer":
        node = {"type": "integer"}
    elif row.kind == "hz":
        node = {"type": "number", "exclusiveMinimum": 0}
    else:  # ns (in the record's unit), fraction
        node = {"type": "number", "minimum": 0}
    if row.help:
        node["description"] = row.help
    always = row.group == "point" and row.every_mode and row.capability is None and \
        (row.required or row.default is not None)
    return node if always else _nullable(node)


def _with_options(schema: dict[str, Any]) -> dict[str, Any]:
    """Version 2 with the option table's fields (top-level, and ``qos``'s), every
    one required; of the file's own fields, those its ``required`` lists (a field
    added within version 2, such as ``phases``, is absent from older records)."""
    props, qos = dict(schema["properties"]), dict[str, Any]()
    options: list[str] = []
    for row in snapshot().record_rows:
        parent, _, name = row.field.rpartition(".")
        (qos if parent == "qos" else props)[name] = option_schema(row)
        if parent != "qos":
            options.append(name)
    if qos:
        props["qos"] = {"type": "object", "additionalProperties": False, "required": list(qos), "properties": qos}
        options.append("qos")
    required = list(dict.fromkeys([*schema["required"], *options]))
    return {**schema, "properties": props, "required": required}


@lru_cache(maxsize=None)
def load_schema(version: int = SCHEMA_VERSIONS[-1]) -> dict[str, Any]:
    text = resources.files(__name__).joinpath(f"result-v{version}.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return _with_options(schema) if version >= 2 else schema


@lru_cache(maxsize=None)
def _validator(version: int = SCHEMA_VERSIONS[-1]) -> Any:
    import jsonschema

    schema = load_schema(version)
    cls = jsonschema.validators.validator_for(schema)
    # The schemas are checked against their metaschema by the tests (test_schema.py), not in every
    # command that writes a record (half a second each).
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def _version(record: Any) -> int:
    version = record.get("schema_version") if isinstance(record, dict) else None
    return version if type(version) is int and version in SCHEMA_VERSIONS else SCHEMA_VERSIONS[-1]


def record_errors(record: Any) -> list[str]:
    """Every schema violation (against the record's own version), as 'path: message' strings."""
    errors = sorted(_validator(_version(record)).iter_errors(record), key=lambda e: [str(p) for p in e.absolute_path])
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(record)'}: {e.message}" for e in errors]


def validate_record(record: dict[str, Any]) -> None:
    """Raise SchemaError listing what is wrong with ``record``."""
    errors = record_errors(record)
    if errors:
        raise SchemaError("; ".join(errors))


def record_ok(record: Any) -> bool:
    """True when ``record`` matches its version's schema (what jsonschema would say, quicker)."""
    ok: bool = _compiled(_version(record))(record)
    return ok


@lru_cache(maxsize=None)
def _compiled(version: int) -> Callable[[Any], bool]:
    try:
        return compile_schema(load_schema(version), _validator(version).format_checker)
    except NotImplementedError:  # pragma: no cover - a keyword the compiler does not know: the slow, sure way
        slow: Check = _validator(version).is_valid
        return slow


# -- the schema compiled into closures -------------------------------------------------

Check = Callable[[Any], bool]

#: Keywords that say nothing about validity.
_ANNOTATIONS = {"$schema", "$id", "$comment", "title", "description", "default", "examples", "deprecated",
                "readOnly", "writeOnly", "$defs"}

_PY_TYPES = {"null": type(None), "boolean": bool, "object": dict, "array": list, "string": str}


def _type_check(names: list[str]) -> Check:
    """JSON Schema's ``type``: bool is no number, 1.0 is an integer."""
    unknown = set(names) - set(_PY_TYPES) - {"number", "integer"}
    if unknown:
        raise NotImplementedError(f"type {', '.join(sorted(unknown))}")
    exact = tuple(_PY_TYPES[n] for n in names if n in _PY_TYPES)
    number, integer = "number" in names, "integer" in names

    def check(v: Any) -> bool:
        if isinstance(v, bool):
            return bool in exact
        if isinstance(v, int):
            return number or integer
        if isinstance(v, float):
            return number or (integer and v.is_integer())
        return isinstance(v, exact)

    return check


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON Schema means it: 1 == 1.0, but true is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b))
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    return type(a) is type(b) and a == b


def compile_schema(schema: dict[str, Any], format_checker: Any = None) -> Check:
    """``schema`` as one function instance -> valid; NotImplementedError for a keyword it does not know."""
    root = schema
    compiled_refs: dict[str, Check] = {}

    def ref(target: str) -> Check:
        if target not in compiled_refs:
            if not target.startswith("#/"):
                raise NotImplementedError(f"$ref {target}")
            node: Any = root
            for part in target[2:].split("/"):
                node = node[part.replace("~1", "/").replace("~0", "~")]
            slot: list[Check] = []
            compiled_refs[target] = lambda v: slot[0](v)  # recursion-safe: filled in below
            slot.append(compile_node(node))
        return compiled_refs[target]

    def compile_node(node: Any) -> Check:
        if node is True:
            return lambda v: True
        if node is False:
            return lambda v: False
        if not isinstance(node, dict):
            raise NotImplementedError(repr(node))
        checks: list[Check] = []
        unknown = set(node) - _ANNOTATIONS - _KEYWORDS
        if unknown:
            raise NotImplementedError(", ".join(sorted(unknown)))
        if "$ref" in node:
            checks.append(ref(node["$ref"]))
        if "type" in node:
            checks.append(_type_check(node["type"] if isinstance(node["type"], list) else [node["type"]]))
        if "const" in node:
            const = node["const"]
            checks.append(cast(Check, lambda v, c=const: _json_equal(v, c)))
        if "enum" in node:
            options = list(node["enum"])
            checks.append(cast(Check, lambda v, o=options: any(_json_equal(v, x) for x in o)))
        ops: dict[str, Callable[[Any, Any], bool]] = {
            "minimum": lambda v, b: v >= b, "maximum": lambda v, b: v <= b,
            "exclusiveMinimum": lambda v, b: v > b, "exclusiveMaximum": lambda v, b: v < b}
        for key, op in ops.items():
            if key in node:
                bound = node[key]
                checks.append(cast(Check, lambda v, b=bound, op=op: not _is_number(v) or op(v, b)))
        if "minLength" in node:
            checks.append(cast(Check, lambda v, n=node["minLength"]: not isinstance(v, str) or len(v) >= n))
        if "maxLength" in node:
            checks.append(cast(Check, lambda v, n=node["maxLength"]: not isinstance(v, str) or len(v) <= n))
        if "pattern" in node:
            pattern = re.compile(node["pattern"])
            checks.append(cast(Check, lambda v, p=pattern: not isinstance(v, str) or p.search(v) is not None))
        if "format" in node:
            if format_checker is not None:
                name = node["format"]
                checks.append(cast(Check, lambda v, n=name: format_checker.conforms(v, n)))
        if "minItems" in node:
            checks.append(cast(Check, lambda v, n=node["minItems"]: not isinstance(v, list) or len(v) >= n))
        if "maxItems" in node:
            checks.append(cast(Check, lambda v, n=node["maxItems"]: not isinstance(v, list) or len(v) <= n))
        if "items" in node:
            item = compile_node(node["items"])
            checks.append(cast(Check, lambda v, item=item: not isinstance(v, list) or all(item(x) for x in v)))
        if "required" in node:
            names = tuple(node["required"])
            checks.append(cast(Check, lambda v, names=names: not isinstance(v, dict) or all(n in v for n in names)))
        if "properties" in node or "additionalProperties" in node:
            props = {k: compile_node(s) for k, s in (node.get("properties") or {}).items()}
            extra_schema = node.get("additionalProperties", True)
            extra = None if extra_schema is True else compile_node(extra_schema)

            def objects(v: Any, props: dict[str, Check] = props, extra: Check | None = extra) -> bool:
                if not isinstance(v, dict):
                    return True
                for k, value in v.items():
                    check = props.get(k)
                    if check is not None:
                        if not check(value):
                            return False
                    elif extra is not None and not extra(value):
                        return False
                return True

            checks.append(objects)
        if "not" in node:
            negated = compile_node(node["not"])
            checks.append(cast(Check, lambda v, n=negated: not n(v)))
        if "allOf" in node:
            parts = [compile_node(s) for s in node["allOf"]]
            checks.append(cast(Check, lambda v, parts=parts: all(p(v) for p in parts)))
        if "anyOf" in node:
            parts = [compile_node(s) for s in node["anyOf"]]
            checks.append(cast(Check, lambda v, parts=parts: any(p(v) for p in parts)))
        if "oneOf" in node:
            parts = [compile_node(s) for s in node["oneOf"]]
            checks.append(cast(Check, lambda v, parts=parts: sum(1 for p in parts if p(v)) == 1))
        if "if" in node:
            cond = compile_node(node["if"])
            then = compile_node(node.get("then", True))
            other = compile_node(node.get("else", True))
            checks.append(cast(Check, lambda v, c=cond, t=then, o=other: t(v) if c(v) else o(v)))
        elif "then" in node or "else" in node:
            pass  # without "if" they have no effect
        if not checks:
            return lambda v: True
        if len(checks) == 1:
            return checks[0]
        checks_ = tuple(checks)

        def every(v: Any) -> bool:
            for check in checks_:
                if not check(v):
                    return False
            return True

        return every

    return compile_node(root)


_KEYWORDS = {"$ref", "type", "const", "enum", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
             "minLength", "maxLength", "pattern", "format", "minItems", "maxItems", "items", "required",
             "properties", "additionalProperties", "not", "allOf", "anyOf", "oneOf", "if", "then", "else"}
