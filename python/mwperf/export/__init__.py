"""Output formats of a run, each an :class:`~mwperf.export.exporter.Exporter`:
tables (text, Markdown), results.csv, RTI Perftest's CSV tables, the HTML
report (figures by Plotly, ``figures``) and its figures as SVG/PNG files,
Parquet; ``frame``: records as a pandas DataFrame."""
