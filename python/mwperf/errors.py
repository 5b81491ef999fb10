"""Every error mwperf raises on purpose, in one place.

Two of them are bad input (:class:`BadInput`): the CLI prints their message
as one line (``mwperf: error: ...``) and exits 2, never a traceback. They
carry what they are about as typed attributes, so that a caller (a sweep
plan naming its key) never has to read their text:

* :class:`UsageError`: an option of a command and the value given to it;
* :class:`PlanError`: a sweep plan, the key and the value in it;
* :class:`Refused`: records that contradict themselves (a forged or repeated launch), the run named.

The others are trouble while running, each caught where a point or a command
can go on without it.
"""

from __future__ import annotations

__all__ = [
    "MwperfError", "BadInput", "UsageError", "Unsupported", "PlanError", "UnitError", "AgentError", "PointFailed",
    "ServiceError", "SchemaError", "StorageError", "Busy", "Refused",
]


class MwperfError(Exception):
    """Base of mwperf's own errors; ``str()`` is one line."""


class BadInput(MwperfError):
    """What the user gave cannot be used (exit code 2)."""


class UsageError(BadInput):
    """A bad value of an option, e.g. ``--size 70000: udp carries at most 65507
    bytes per message``.

    ``option`` is the option (``--size``) or the command word (``report``) the
    input was given to, None when the input as a whole is wrong; ``value`` the
    value as given (None when the option itself is the problem, as ``--async``
    for a middleware without it); ``reason`` what is wrong with it.
    """

    def __init__(self, option: str | None, value: str | None, reason: str):
        self.option, self.value, self.reason = option, value, reason
        head = option if value is None else f"{option} {value}"
        super().__init__(reason if option is None else f"{head}: {reason}")


class Unsupported(UsageError):
    """A value valid in itself that the chosen middleware ``mw`` cannot
    honour (``--async: not supported by cyclonedds``, a size above its
    limit): a sweep plan suggests the exclude rule that drops those points."""

    def __init__(self, option: str, value: str | None, reason: str, mw: str):
        super().__init__(option, value, reason)
        self.mw = mw


class PlanError(BadInput):
    """A bad sweep plan, e.g. ``plans/mine.yaml: size: 70000: udp carries at
    most 65507 bytes per message``: the plan (``source``), the ``key`` (None for
    the plan as a whole, ``exclude[1].size_over`` inside a rule), the ``value``
    (None when the key itself is the problem) and the ``reason``."""

    def __init__(self, source: str, key: str | None, value: str | None, reason: str):
        self.source, self.key, self.value, self.reason = source, key, value, reason
        super().__init__(": ".join(part for part in (source, key, value, reason) if part is not None))


class UnitError(ValueError):
    """A value that cannot be parsed as a size, duration or rate; the message
    says why without repeating the value (the caller names option and value)."""


class AgentError(MwperfError):
    """The agent could not be run, timed out, or said something unusable."""


class PointFailed(MwperfError):
    """One point cannot go on; the message is its record's ``error``."""


class ServiceError(PointFailed):
    """A point's helper process (``AdapterInfo.service``) is unknown or did not start."""


class SchemaError(ValueError):
    """A record does not match the results schema (a bug, never bad input)."""


class StorageError(BadInput, OSError):
    """A run directory cannot be written (disk full, read-only, no
    permission): ``path: cannot write: reason`` (and, ``then``, what that leaves: ``run.json still
    says 'running'``). What was written before stays
    and nothing half-written is left, so a sweep resumes once there is room.
    An OSError too (``errno``, ``strerror``, ``filename``), so that a caller
    that catches OSError around an optional file still does."""

    def __init__(self, path, cause: OSError, then: str | None = None):
        OSError.__init__(self, cause.errno, cause.strerror or str(cause), str(path))
        self.path, self.reason, self.then = str(path), cause.strerror or str(cause), then

    def __str__(self) -> str:
        return f"{self.path}: cannot write: {self.reason}" + (f"; {self.then}" if self.then else "")


class Busy(BadInput):
    """Another mwperf holds what this one needs (a run directory it writes,
    the machine's benchmark cores); the message names it."""


class Refused(BadInput):
    """Records that contradict themselves or each other (a launch recorded twice, more received than
    sent, a negative percentile): refused as a whole, never shown as measurements
    (:mod:`mwperf.results.checks`). ``source`` is the run directory (or the store's run), ``reason``
    names the point and the field."""

    def __init__(self, source: str, reason: str):
        self.source, self.reason = source, reason
        super().__init__(f"{source}: {reason}")
