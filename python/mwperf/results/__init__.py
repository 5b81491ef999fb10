"""What a run leaves: its run directory (``rundir``: results.jsonl, run.json,
the samples; ``reading``: read as untrusted input; ``confined``: every write
inside it) and its floor (``floor``). The record itself is :mod:`mwperf.model`'s."""
