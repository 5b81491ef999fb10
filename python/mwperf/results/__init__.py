"""What a run leaves: the record of each point (``record``, checked against
``schema``), the run directory (``rundir``) and how records are named
(``labels``)."""
