"""Ctrl-C / SIGTERM handling shared by the runner and the run directory."""

from __future__ import annotations

import contextlib
import os
import signal
import threading

__all__ = ["signals_deferred", "sigterm_as_interrupt"]


@contextlib.contextmanager
def signals_deferred():
    """Hold SIGINT/SIGTERM back inside the block; one that came is delivered at its end.

    In the main thread the handlers are swapped for one that only notes the
    signal: blocking it in this thread alone is not enough once a library
    has started threads of its own (numpy's OpenBLAS, pyarrow), since the
    kernel then hands a process's signal to one of them and Python still
    raises KeyboardInterrupt here. Elsewhere the signals are blocked in the
    calling thread."""
    sigs = (signal.SIGINT, signal.SIGTERM)
    if threading.current_thread() is not threading.main_thread():
        try:
            old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
        except (AttributeError, OSError, ValueError):  # pragma: no cover - not POSIX
            yield
            return
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        return
    caught: list[int] = []
    old = {s: signal.signal(s, lambda signum, frame: caught.append(signum)) for s in sigs}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
        for signum in dict.fromkeys(caught):
            handler = old[signum]
            if callable(handler):
                handler(signum, None)  # e.g. KeyboardInterrupt, or an outer block's note
            elif handler == signal.SIG_DFL:
                os.kill(os.getpid(), signum)  # its default action, now


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
