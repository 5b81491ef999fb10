"""Ctrl-C / SIGTERM handling shared by the runner and the run directory."""

from __future__ import annotations

import contextlib
import signal

__all__ = ["signals_deferred", "sigterm_as_interrupt"]


@contextlib.contextmanager
def signals_deferred():
    """Block SIGINT/SIGTERM inside the block; a pending one is delivered at its end."""
    sigs = {signal.SIGINT, signal.SIGTERM}
    try:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
    except (AttributeError, OSError, ValueError):  # pragma: no cover - not POSIX
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


@contextlib.contextmanager
def sigterm_as_interrupt():
    """Treat SIGTERM like Ctrl-C (only possible from the main thread)."""
    try:
        old = signal.signal(signal.SIGTERM, _raise_interrupt)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)
