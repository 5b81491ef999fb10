// Time in integer nanoseconds, and waiting until an absolute time.
//
// Deadlines always run on CLOCK_MONOTONIC. The stamps that cross between
// hosts use the run's stamp clock: CLOCK_MONOTONIC (one host, or two hosts
// whose offset the controller estimates and passes in) or CLOCK_REALTIME
// (hosts synchronised by PTP or chrony), read as monotonic + a base taken once
// at start, so a stamp costs what a monotonic read costs.
#pragma once
#include <cstdint>
#include <ctime>

namespace mwperf {

inline int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

inline int64_t realtime_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

// CLOCK_REALTIME - CLOCK_MONOTONIC, from the pair of readings closest together
// of a few tries.
inline int64_t realtime_base_ns() {
  int64_t best_gap = INT64_MAX, base = 0;
  for (int i = 0; i < 16; ++i) {
    const int64_t a = now_ns(), r = realtime_ns(), b = now_ns();
    if (b - a < best_gap) {
      best_gap = b - a;
      base = r - (a + (b - a) / 2);
    }
  }
  return base;
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
