// Monotonic time in integer nanoseconds, and waiting until an absolute time.
#pragma once
#include <cstdint>
#include <ctime>

namespace mwperf {

inline int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

// Sleeps (block) or busy-waits (spin) until the absolute monotonic time t_ns.
inline void wait_until(int64_t t_ns, bool spin) {
  if (spin) {
    while (now_ns() < t_ns) {
    }
    return;
  }
  timespec ts;
  ts.tv_sec = t_ns / 1000000000LL;
  ts.tv_nsec = t_ns % 1000000000LL;
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != 0) {
  }
}

}  // namespace mwperf
