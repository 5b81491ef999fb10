"""mwperf: measure publish/subscribe middleware latency, throughput and loss.

The Python package is the controller: it validates options, starts one
``mwperf-agent`` per side of each test point (see docs/agent-protocol.md),
merges both sides into one record, and writes/prints the results.
"""

__version__ = "0.1.0"
