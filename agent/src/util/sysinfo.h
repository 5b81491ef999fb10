// Process placement and resource usage.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mwperf {

// Pins the calling thread (and so threads created after it) to one core.
// cpu < 0 leaves the affinity alone. Returns "" or an error text.
std::string pin_to_cpu(int cpu);
std::vector<int> current_affinity();

struct ThreadTime {
  int tid = 0;
  std::string name;    // /proc/self/task/TID/comm
  int64_t cpu_ns = 0;  // on-CPU time so far (schedstat: user + system, in ns)
  int64_t start = 0;   // when it started (/proc/self/task/TID/stat starttime, clock ticks): with
                       // the tid, which thread this is (a tid is reused once its thread ends)
  bool own = false;    // one of mwperf's (registered: util/own_threads.h) when it was read
};

// What the process has used so far: CPU (getrusage, all threads), peak RSS,
// and each thread's on-CPU time, so that where the CPU went (the agent's
// threads, the middleware's receive and event threads) can be told apart.
struct Usage {
  int64_t user_ns = 0, sys_ns = 0;
  long maxrss_kb = 0;
  std::vector<ThreadTime> threads;
};
Usage usage_now();
// The same, cheap enough to read every few milliseconds: each thread's CPU
// from its CPU clock, its name and start read once per thread id (`known`
// keeps them, with each one's last reading: a thread that has ended since
// counts with it); no peak RSS (0).
Usage usage_quick(std::map<int, ThreadTime>* known);
// A "Vm...:" field of /proc/self/status in kB (VmRSS, VmHWM), 0 if absent.
long status_kb(const char* field);  // getrusage(RUSAGE_SELF): all threads of the process

}  // namespace mwperf
