"""Exporters: one module per output format (csv, tables)."""
