"""mwperf: measure publish/subscribe middleware latency, throughput and loss.

The Python package is the controller: it validates options, starts one
``mwperf-agent`` per side of each test point (see docs/agent-protocol.md),
merges both sides into one record, and writes/prints the results.

``mwperf.load(DIR)`` reads a run's results as a pandas DataFrame, ``mwperf.load(db=STORE)``
every run of a results store.
"""

from mwperf.version import __version__

__all__ = ["load", "__version__"]


def load(path=None, *, subscribers=False, db=None):
    """A run's results.jsonl as a tidy pandas DataFrame (one row per point,
    dotted column names; ``subscribers=True``: one row per subscriber); or
    every run of a results store (``db=``). See :mod:`mwperf.loader`."""
    from mwperf.loader import load as _load

    return _load(path, subscribers=subscribers, db=db)
