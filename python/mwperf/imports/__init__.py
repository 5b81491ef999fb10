"""Other tools' results (RTI Perftest, ddsperf) read into run directories."""
