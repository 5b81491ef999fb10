"""Text from outside mwperf (run directories, plans, agents, command lines)
as it may be printed: control characters, ANSI escape sequences among them,
and the bidirectional controls (U+202E RIGHT-TO-LEFT OVERRIDE and its kin,
which make a terminal show a text reversed) written out as escapes, so a
record field or a directory name can never move the cursor, retitle the
window, clear the terminal or pass for another text. What rich renders is
handed to it as plain text, never as markup (``[link=...]``, ``[/x]``). A
results store's URL or libpq keyword string is printed (and kept in run.json)
without its password, in every form it may take (:func:`shown_store`)."""

from __future__ import annotations

import io
import re
from typing import Any, TextIO
from urllib.parse import SplitResult, unquote, urlsplit, urlunsplit

__all__ = ["printable", "shown", "PrintableStream", "unfiltered", "shown_store", "store_secrets", "is_server_store",
           "unreadable_store_url", "foreign_store_url"]

#: Bidirectional controls: marks, embeddings, overrides, isolates.
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
#: Control characters, bidirectional controls, and lone surrogates (undecodable bytes of a file name: no
#: terminal can print them).
_CONTROL = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029{_BIDI}\\ud800-\\udfff]")
#: As _CONTROL, but line breaks and tabs of a multi-line text are kept.
_CONTROL_BUT_LAYOUT = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f\\u2028\\u2029{_BIDI}\\ud800-\\udfff]")


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


# -- a results store's text (mwperf.store.connect) -----------------------------------------------

_URL = re.compile(r"^(postgresql|postgres)://", re.I)
#: How a libpq keyword string starts (``host=...``): such a text is never a DuckDB file's name.
_KEYWORDS = re.compile(r"^\s*[A-Za-z_]+\s*=")
#: A password in a keyword string or a URL's query, quoted or not (and a misspelt one: passwd=, pwd=).
_PASSWORD_KEYWORD = re.compile(r"(?i)(\b[a-z_]*(?:pass|pwd)[a-z_]*\s*=\s*)('(?:[^'\\]|\\.)*'?|\S*)")
_PASSWORD_QUERY = re.compile(r"(?i)([?&][a-z_]*(?:pass|pwd)[a-z_]*=)([^&#]*)")


#: Any URL's start, one slash or two (``mysql://``, ``postgresql+psycopg://``, ``postgresql:/``), and
#: PostgreSQL's without a slash (``postgresql:qa:pw@host/db``): a text that starts so is a URL, never a DuckDB
#: file's name (a file so named would be made in a folder ``postgresql:``).
_ANY_URL = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*:/|postgres(?:ql)?[+:])", re.I)
#: A URL's user part with a password (``user:pw@``): the password, up to the last ``@`` before the path.
_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*:/*)([^/?#@:]*):([^/?#]*)@")


def is_server_store(url: str) -> bool:
    """A PostgreSQL URL or keyword string (not a DuckDB file)."""
    return bool(_URL.match(url) or _KEYWORDS.match(url))


def foreign_store_url(url: str) -> bool:
    """A URL that is no PostgreSQL URL mwperf reads (``mysql://...``, SQLAlchemy's ``postgresql+psycopg://...``,
    a one-slash ``postgresql:/...``): refused before anything is opened or made of it."""
    return bool(_ANY_URL.match(url)) and not _URL.match(url)


def unreadable_store_url(url: str) -> bool:
    """A PostgreSQL URL that cannot be parsed (``postgresql://qa:pw@[::1/db``)."""
    return bool(_URL.match(url)) and _split(url) is None


def _split(url: str) -> SplitResult | None:
    """The URL's parts, None when it cannot be parsed (``[::1/db``)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port that is no number
        return parts
    except ValueError:
        return None


def _shown_other_url(url: str) -> str:
    """Any other URL without the password of its user part and of its query."""
    text = _USERINFO.sub(lambda m: f"{m.group(1)}{m.group(2)}@", url, count=1)
    path, mark, query = text.partition("?")
    return f"{path}{_query(query) if mark else ''}"


def shown_store(url: str) -> str:
    """The store as it may be printed: a URL (of any kind, one mwperf reads or not) or a libpq keyword
    string without its password."""
    if foreign_store_url(url):
        return _shown_other_url(url)
    if not is_server_store(url):
        return url
    if not _URL.match(url):
        return " ".join(_PASSWORD_KEYWORD.sub("", url).split())
    parts = _split(url)
    if parts is None:  # unparsable: the user part before ':' and the rest after the last '@' of the address
        scheme, _, rest = url.partition("://")
        address, slash, tail = rest.partition("/")
        if "@" in address:
            user, _, host = address.rpartition("@")
            address = f"{user.split(':', 1)[0]}@{host}"
        path, mark, query = tail.partition("?")
        return f"{scheme}://{address}{slash}{path}{_query(query) if mark else ''}"
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.split(':', 1)[0]}@{host}"
    return urlunsplit((parts.scheme, netloc, parts.path, _query(parts.query)[1:], parts.fragment))


def _query(query: str) -> str:
    """``?query`` without its passwords ('' when nothing is left)."""
    rest = _PASSWORD_QUERY.sub("", "?" + query).lstrip("?&")
    return f"?{rest}" if rest else ""


def store_secrets(url: str) -> list[str]:
    """Every password the store's text holds, as written and as decoded (to be masked in any message)."""
    if not (is_server_store(url) or foreign_store_url(url)):
        return []
    found = [m.group(2) for pattern in (_PASSWORD_KEYWORD, _PASSWORD_QUERY) for m in pattern.finditer(url)]
    address = url.partition("://")[2].partition("/")[0]
    if "@" in address and ":" in address.rpartition("@")[0]:
        found.append(address.rpartition("@")[0].split(":", 1)[1])
    other = _USERINFO.match(url)
    if other:
        found.append(other.group(3))
    found += [unquote(f) for f in found] + [f.strip("'") for f in found]
    return sorted({f for f in found if len(f) >= 2}, key=len, reverse=True)
