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
