"""The command line: ``main`` parses and maps errors to exit codes; one
module per command (run, sweep, doctor, report, baseline, compare, export,
import)."""
