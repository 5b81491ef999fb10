"""A lab of hosts through Ansible: the hosts of an inventory in Ansible's own
YAML format (:mod:`~mwperf.lab.inventory`, read by ``ansible-inventory``),
prepared by the playbook shipped here (:mod:`~mwperf.lab.prepare`:
``playbook/prepare.yml``: the bundle installed in the cache ``--hosts`` uses,
the recommended sysctls with ``--tune``, time synchronisation checked), then
measured a pair of hosts at a time (``mwperf sweep --inventory --pairs``,
each record's ``host_pair``). Ansible (``ansible-core``) is the extra
``lab``; each run of it keeps its files in a directory of its own
(:mod:`~mwperf.lab.ansible`)."""
