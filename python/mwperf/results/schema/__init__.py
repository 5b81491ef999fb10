"""The result-record JSON Schema (``result-v1.json``, draft 2020-12).

jsonschema is imported when the first record is checked, not with the
package: the command line, which reaches this through the run directory,
stays quick to start."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources

from mwperf.errors import SchemaError

__all__ = ["load_schema", "validate_record", "record_errors"]

SCHEMA_FILE = "result-v1.json"


@lru_cache(maxsize=1)
def load_schema() -> dict:
    text = resources.files(__name__).joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    return json.loads(text)


@lru_cache(maxsize=1)
def _validator():
    import jsonschema

    schema = load_schema()
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def record_errors(record: dict) -> list[str]:
    """Every schema violation, as 'path: message' strings."""
    errors = sorted(_validator().iter_errors(record), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(record)'}: {e.message}" for e in errors]


def validate_record(record: dict) -> None:
    """Raise SchemaError listing what is wrong with ``record``."""
    errors = record_errors(record)
    if errors:
        raise SchemaError("; ".join(errors))
