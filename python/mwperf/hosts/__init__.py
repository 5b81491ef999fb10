"""The far side of ``--hosts``: what each host is (:mod:`~mwperf.hosts.probe`),
the bundle of its architecture put in place there (:mod:`~mwperf.hosts.place`,
:mod:`~mwperf.hosts.bundles`), its leftovers cleaned (:mod:`~mwperf.hosts.cleanup`),
all of it before the first point (:mod:`~mwperf.hosts.prepare`); ``mwperf hosts
check`` does only that (:mod:`mwperf.cli.hosts`)."""
