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
Usage usage_now();
// A "Vm...:" field of /proc/self/status in kB (VmRSS, VmHWM), 0 if absent.
long status_kb(const char* field);  // getrusage(RUSAGE_SELF): all threads of the process

}  // namespace mwperf
