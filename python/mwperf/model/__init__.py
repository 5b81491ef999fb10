"""The record of a point: how it is made from the agents' results (``merge``),
its schema and the one step up from an older version (``schema``, ``upgrade``),
its type (``record``: :class:`~mwperf.model.record.Record` and its parts) and
the views every reader shares (``labels``, ``fairness``, ``launches``)."""
