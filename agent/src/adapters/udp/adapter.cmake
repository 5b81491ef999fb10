# Raw UDPv4 (no middleware: the floor the other rows are compared with), in the agent executable.
mwperf_adapter(udp udp.cpp)
