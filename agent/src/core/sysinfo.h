// Process placement and resource usage.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace mwperf {

// Pins the calling thread (and so threads created after it) to one core.
// cpu < 0 leaves the affinity alone. Returns "" or an error text.
std::string pin_to_cpu(int cpu);
std::vector<int> current_affinity();

struct Usage {
  int64_t user_ns = 0, sys_ns = 0;
  long maxrss_kb = 0;
};
Usage usage_now();  // getrusage(RUSAGE_SELF): all threads of the process

}  // namespace mwperf
