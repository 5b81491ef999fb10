"""Output formats of a run, each an :class:`~mwperf.export.exporter.Exporter`:
tables (text, Markdown), results.csv, RTI Perftest's CSV tables, the HTML
report (charts drawn by ``svg``) and its plots as files."""
