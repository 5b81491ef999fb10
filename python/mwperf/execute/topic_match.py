"""Topic expressions matched against mwperf's topics, every run id at once.

A topic (or partition) expression of a DDS Security document is an fnmatch
pattern (``*``, ``?``, ``[...]``, ``[!...]``), ``/`` an ordinary character.
mwperf's topics carry the point's run id, drawn when the point starts
(``rt/mwperf_data_<run id>``, ``rt/mwperf_echo_<run id>``, the adapters'
names): :func:`verdict` says whether an expression matches all of a
:class:`Topic`'s names, none or some, by running the pattern's automaton
over the prefix and then over every decimal run id of up to ten digits (the
sets of states it can be in, not the 2^32 ids one by one).

Cyclone DDS reads a backslash as an escape (BSD fnmatch), Fast DDS as a
character (fnmatch with FNM_NOESCAPE): an expression the two read
differently is refused. A POSIX class (``[[:digit:]]``) is refused too.
"""

from __future__ import annotations

from dataclasses import dataclass

from mwperf.errors import MwperfError

__all__ = ["DocumentError", "Topic", "TOPICS", "verdict", "any_verdict"]


class DocumentError(MwperfError):
    """A document that cannot be read or does not say what a point needs; one line (its caller names the file)."""


_Token = tuple  # ("=", char) | ("?",) | ("*",) | ("[", negated, ((low, high), ...))


def _class(expr: str, i: int, escapes: bool) -> tuple[_Token, int] | None:
    """The bracket expression opening at ``expr[i - 1]``, and where it ends; None when it does not close
    (the ``[`` is then a character of its own, as fnmatch has it)."""
    negated = i < len(expr) and expr[i] in "!^"
    i += negated
    ranges: list[tuple[str, str]] = []
    first = True
    while i < len(expr):
        c = expr[i]
        if c == "]" and not first:
            return ("[", negated, tuple(ranges)), i + 1
        if c == "[" and i + 1 < len(expr) and expr[i + 1] in ":=.":
            raise DocumentError(f"topic_expression {expr!r}: a [{expr[i + 1]} class, which mwperf does not read")
        if c == "\\" and escapes and i + 1 < len(expr):
            i += 1
            c = expr[i]
        low = c
        if i + 2 < len(expr) and expr[i + 1] == "-" and expr[i + 2] != "]":
            i += 2
            high = expr[i]
            if high == "\\" and escapes and i + 1 < len(expr):
                i += 1
                high = expr[i]
            ranges.append((low, high))
        else:
            ranges.append((low, low))
        first = False
        i += 1
    return None


def _tokens(expr: str, escapes: bool) -> tuple[_Token, ...]:
    out: list[_Token] = []
    i = 0
    while i < len(expr):
        c = expr[i]
        if c == "*":
            if not out or out[-1] != ("*",):
                out.append(("*",))
        elif c == "?":
            out.append(("?",))
        elif c == "[" and (found := _class(expr, i + 1, escapes)) is not None:
            out.append(found[0])
            i = found[1]
            continue
        elif c == "\\" and escapes and i + 1 < len(expr):
            i += 1
            out.append(("=", expr[i]))
        else:
            out.append(("=", c))
        i += 1
    return tuple(out)


def _takes(token: _Token, c: str) -> bool:
    if token[0] == "=":
        return token[1] == c
    if token[0] in "?*":
        return True
    return any(low <= c <= high for low, high in token[2]) != token[1]


def _closure(tokens: tuple[_Token, ...], states: set[int]) -> frozenset[int]:
    out = set(states)
    for i in sorted(states):
        while i < len(tokens) and tokens[i][0] == "*":  # a star may match nothing
            i += 1
            out.add(i)
    return frozenset(out)


def _step(tokens: tuple[_Token, ...], states: frozenset[int], c: str) -> frozenset[int]:
    nxt = set()
    for i in states:
        if i < len(tokens) and _takes(tokens[i], c):
            nxt.add(i if tokens[i][0] == "*" else i + 1)
    return _closure(tokens, nxt)


@dataclass(frozen=True)
class Topic:
    """A family of topic names: ``prefix`` and then a run id (0 to 2^32 - 1, in decimal without leading
    zeros), or exactly ``prefix`` (``run_id`` False: a partition's name, the default partition's ``""``)."""

    prefix: str
    run_id: bool = True

    def __str__(self) -> str:
        return f"{self.prefix}<run id>" if self.run_id else repr(self.prefix)


#: mwperf's topics: what a point's publisher writes and its subscriber echoes (the adapters' names).
TOPICS = {"data": Topic("rt/mwperf_data_"), "echo": Topic("rt/mwperf_echo_")}
_DIGITS = "0123456789"
_RUN_ID_DIGITS = 10  # 4294967295


def _verdict(tokens: tuple[_Token, ...], topic: Topic) -> str:
    state = _closure(tokens, {0})
    for c in topic.prefix:
        state = _step(tokens, state, c)
    end = len(tokens)
    if not topic.run_id:
        return "all" if end in state else "none"
    outcomes = {end in _step(tokens, state, "0")}  # run id 0; every other one has no leading zero
    frontier = {_step(tokens, state, d) for d in _DIGITS[1:]}
    for length in range(1, _RUN_ID_DIGITS + 1):
        outcomes |= {end in s for s in frontier}
        if length < _RUN_ID_DIGITS:
            frontier = {_step(tokens, s, d) for s in frontier for d in _DIGITS}
    return "some" if len(outcomes) == 2 else "all" if True in outcomes else "none"


def verdict(expr: str, topic: Topic) -> str:
    """``all`` when the fnmatch expression matches every name of ``topic``, ``none`` when it matches none,
    ``some`` else (11 digits at most: ids beyond 2^32 - 1 count too, which only makes this stricter).
    DocumentError when fnmatch with backslash escapes (Cyclone DDS) and without (Fast DDS) disagree."""
    escaped, plain = _verdict(_tokens(expr, True), topic), _verdict(_tokens(expr, False), topic)
    if escaped != plain:
        raise DocumentError(f"topic_expression {expr!r}: read differently with backslash escapes (matches "
                            f"{escaped} of {topic}) and without ({plain})")
    return escaped


def any_verdict(exprs: list[str], topic: Topic) -> str:
    """The verdict of several expressions, any of which may match."""
    found = {verdict(e, topic) for e in exprs}
    return "all" if "all" in found else "some" if "some" in found else "none"
