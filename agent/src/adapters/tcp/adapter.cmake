# Raw TCP (no middleware: the floor the other rows are compared with), in the agent executable.
mwperf_adapter(tcp tcp.cpp)
