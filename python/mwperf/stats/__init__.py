"""The statistics mwperf decides with, as pure functions over arrays of
numbers (no records, no files, nothing of mwperf's own imported): the
launch-level interval of a headline figure (:mod:`.launches`), the gates'
decision rules (:mod:`.gates`) and max-rate's next-probe rule
(:mod:`.probing`). Their simulations are in python/tests/stats/."""
