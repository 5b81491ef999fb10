import os
import signal
import time

import pytest

from mwperf.interrupts import signals_deferred, sigterm_as_interrupt


def test_sigint_waits_for_the_end_of_the_block():
    reached_end = False
    with pytest.raises(KeyboardInterrupt):
        with signals_deferred():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            reached_end = True
    assert reached_end


def test_sigterm_as_interrupt():
    with pytest.raises(KeyboardInterrupt):
        with sigterm_as_interrupt():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(1)
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


def test_sigint_waits_with_other_threads_running():
    """A library's threads (numpy's OpenBLAS, pyarrow) may be handed the signal: still held back."""
    import threading

    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    other.start()
    reached_end = False
    try:
        with pytest.raises(KeyboardInterrupt):
            with signals_deferred():
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.05)
                reached_end = True
        assert reached_end
    finally:
        stop.set()


def test_nested_blocks_deliver_once_at_the_outer_end():
    order = []
    with pytest.raises(KeyboardInterrupt):
        with signals_deferred():
            with signals_deferred():
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.05)
            order.append("inner done")
            time.sleep(0.05)
            order.append("outer done")
    assert order == ["inner done", "outer done"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
