"""Text from outside mwperf (run directories, plans, agents, command lines)
as it may be printed: control characters, ANSI escape sequences among them,
written out as escapes, so a record field or a directory name can never move
the cursor, retitle the window or clear the terminal."""

from __future__ import annotations

import io
import re
from typing import Any, TextIO

__all__ = ["printable", "shown", "PrintableStream", "unfiltered"]

#: Control characters, and lone surrogates (undecodable bytes of a file name: no terminal can print them).
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
#: As _CONTROL, but line breaks and tabs of a multi-line text are kept.
_CONTROL_BUT_LAYOUT = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def _escape(match: re.Match) -> str:
    return match.group().encode("unicode_escape", "backslashreplace").decode("ascii")


def printable(text: str) -> str:
    """``text`` with every control character but newline and tab escaped (``\\x1b``)."""
    return _CONTROL_BUT_LAYOUT.sub(_escape, text)


def shown(value: Any, limit: int = 80) -> str:
    """A value as it may be printed on one line: control characters escaped,
    at most ``limit`` characters."""
    text = value if isinstance(value, str) else repr(value)
    text = _CONTROL.sub(_escape, text)
    return text if len(text) <= limit else text[:limit - 3] + "..."


class PrintableStream(io.TextIOBase):
    """A text stream that writes what it is given :func:`printable` to
    ``raw`` (mwperf's stdout and stderr). Only mwperf's own terminal control,
    the live progress bar, writes to :func:`unfiltered` instead."""

    def __init__(self, raw: TextIO):
        super().__init__()
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(printable(text))
        return len(text)

    def flush(self) -> None:
        self.raw.flush()

    def isatty(self) -> bool:
        return self.raw.isatty()

    def fileno(self) -> int:
        return self.raw.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]  # typeshed: an attribute; TextIOBase's is a property
        return getattr(self.raw, "encoding", "utf-8")


def unfiltered(stream: TextIO) -> TextIO:
    """The stream under a :class:`PrintableStream` (the stream itself otherwise)."""
    return stream.raw if isinstance(stream, PrintableStream) else stream
