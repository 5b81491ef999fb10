"""Reading a plan file as untrusted input: bounded, and YAML without its traps.

A plan comes from anywhere (a bug report, a colleague, a CI job), so reading
it is bounded before anything else happens:

* the file must be a regular file (not ``/dev/zero``, not a FIFO that would
  hang) of at most :data:`MAX_PLAN_BYTES`, UTF-8 text;
* YAML aliases (``*name``) are refused: nested aliases expand exponentially
  ("billion laughs": 457 bytes became 5.9 GB), and a plan never needs them;
* a key written twice in one mapping is refused (YAML would silently keep
  the last value);
* nesting is bounded (:data:`MAX_DEPTH`), so no input reaches Python's
  recursion limit;
* a text that is no Unicode (an escaped lone surrogate, ``"\\ud800"``) is
  refused: it could be written nowhere.

Each refusal is a :class:`~mwperf.errors.PlanError` naming the plan and the
line.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

from mwperf.errors import PlanError

__all__ = ["read_plan_text", "load_yaml", "MAX_PLAN_BYTES", "MAX_DEPTH"]

#: A plan is a few hundred bytes; the bundled ones are under 2 KiB.
MAX_PLAN_BYTES = 256 << 10
#: Mappings and lists nested deeper than this are refused (a plan needs 3).
MAX_DEPTH = 20


def read_plan_text(path: str | Path, source: str | None = None) -> str:
    """The plan's text; PlanError when it is not a regular UTF-8 file of at most MAX_PLAN_BYTES."""
    source = source if source is not None else str(path)
    try:
        # O_NONBLOCK: a FIFO must not hang the open (it is refused below)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError as exc:
        raise PlanError(source, None, None, f"cannot read the plan: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise PlanError(source, None, None, "not a regular file (a plan is a YAML file)")
        if info.st_size > MAX_PLAN_BYTES:
            raise PlanError(source, None, None, f"{info.st_size} bytes: larger than a plan can be "
                                                f"({MAX_PLAN_BYTES >> 10} KiB)")
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read(MAX_PLAN_BYTES + 1)
    except OSError as exc:
        raise PlanError(source, None, None, f"cannot read the plan: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_PLAN_BYTES:
        raise PlanError(source, None, None, f"larger than a plan can be ({MAX_PLAN_BYTES >> 10} KiB)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise PlanError(source, None, None, "not a text (UTF-8) file") from None


_SURROGATE = re.compile(r"[\ud800-\udfff]")


class _Refused(Exception):
    def __init__(self, mark, reason: str):
        super().__init__(reason)
        self.line = mark.line + 1 if mark is not None else None
        self.reason = reason


def _loader_class():
    import yaml

    class StrictLoader(yaml.SafeLoader):
        """SafeLoader without aliases, duplicate keys or deep nesting."""

        depth = 0

        def compose_node(self, parent, index):
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise _Refused(event.start_mark, f"YAML aliases (*{event.anchor}) are not allowed in a plan: "
                                                 f"write the values out")
            self.depth += 1
            try:
                if self.depth > MAX_DEPTH:
                    raise _Refused(self.peek_event().start_mark, f"nested deeper than {MAX_DEPTH} levels")
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

        def construct_scalar(self, node):
            value = super().construct_scalar(node)
            if isinstance(value, str) and _SURROGATE.search(value):  # "\ud800": no UTF-8 file can hold it
                raise _Refused(node.start_mark, f"{ascii(value)[1:-1][:60]}: not valid Unicode text")
            return value

        def construct_mapping(self, node, deep=False):
            seen: dict[Any, int] = {}
            if isinstance(node, yaml.MappingNode):
                for key_node, _ in node.value:
                    if key_node.tag == "tag:yaml.org,2002:merge":
                        raise _Refused(key_node.start_mark, "YAML merge keys (<<) are not allowed in a plan: "
                                                            "write the values out")
                    if not isinstance(key_node, yaml.ScalarNode):
                        raise _Refused(key_node.start_mark, "a key must be a plain value")
                    key = self.construct_object(key_node, deep=True)
                    line = key_node.start_mark.line + 1
                    try:
                        if key in seen:
                            raise _Refused(key_node.start_mark, f"{str(key)[:60]}: written twice (lines {seen[key]} "
                                                                f"and {line}); keep one")
                        seen[key] = line
                    except TypeError:  # unhashable: refused by the constructor itself
                        pass
            return super().construct_mapping(node, deep=deep)

    return StrictLoader


def load_yaml(text: str, source: str) -> Any:
    """The YAML document of a plan; PlanError (naming the line) for what a plan may not hold."""
    import yaml  # only a plan needs it: the command line starts without

    if len(text.encode("utf-8", "surrogatepass")) > MAX_PLAN_BYTES:
        raise PlanError(source, None, None, f"larger than a plan can be ({MAX_PLAN_BYTES >> 10} KiB)")
    loader = _loader_class()(text)
    try:
        return loader.get_single_data()
    except _Refused as exc:
        where = f"line {exc.line}: " if exc.line else ""
        raise PlanError(source, None, None, f"{where}{exc.reason}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or exc
        raise PlanError(source, None, None, f"not valid YAML{where}: {' '.join(str(problem).split())[:200]}") from None
    except (RecursionError, MemoryError):
        raise PlanError(source, None, None, "too deeply nested or too large to read") from None
    except (ValueError, OverflowError) as exc:  # e.g. an integer of more digits than Python converts
        why = "a number with too many digits" if "digits" in str(exc) else str(exc)[:120]
        raise PlanError(source, None, None, f"a value cannot be read: {why}") from None
    finally:
        loader.dispose()
