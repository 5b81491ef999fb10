"""Ctrl-C / SIGTERM / SIGHUP handling shared by the runner and the run directory.

A hang-up (the terminal or the ssh session that started mwperf closed) ends
a run as Ctrl-C does: the results so far are kept, run.json says
'interrupted' and everything the run set up (agents, namespaces, nft
tables, services) is taken down. Its terminal being gone, what mwperf would
still print there goes to /dev/null instead of failing."""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import threading

__all__ = ["signals_deferred", "sigterm_as_interrupt", "INTERRUPTS"]

#: The signals that end a run cleanly (and are held back while a file is written).
INTERRUPTS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def signals_deferred():
    """Hold SIGINT/SIGTERM/SIGHUP back inside the block; one that came is delivered at its end.

    In the main thread the handlers are swapped for one that only notes the
    signal: blocking it in this thread alone is not enough once a library
    has started threads of its own (numpy's OpenBLAS, pyarrow), since the
    kernel then hands a process's signal to one of them and Python still
    raises KeyboardInterrupt here. Elsewhere the signals are blocked in the
    calling thread."""
    sigs = INTERRUPTS
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
            handler = old[signal.Signals(signum)]
            if callable(handler):
                handler(signum, None)  # e.g. KeyboardInterrupt, or an outer block's note
            elif handler == signal.SIG_DFL:
                os.kill(os.getpid(), signum)  # its default action, now


def _raise_interrupt(signum, frame):
    if signum == signal.SIGHUP:
        _leave_terminal()
    raise KeyboardInterrupt


def _leave_terminal() -> None:
    """stdout and stderr to /dev/null where they were a terminal (or any
    character device): after a hang-up writing there fails."""
    try:
        null = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
    except OSError:  # pragma: no cover - no /dev/null
        return
    for fd in (1, 2):
        try:
            if stat.S_ISCHR(os.fstat(fd).st_mode):
                os.dup2(null, fd)
        except OSError:
            pass
    os.close(null)


@contextlib.contextmanager
def sigterm_as_interrupt():
    """Treat SIGTERM and SIGHUP like Ctrl-C (only possible from the main thread)."""
    try:
        old = {s: signal.signal(s, _raise_interrupt) for s in (signal.SIGTERM, signal.SIGHUP)}
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
