#include <gtest/gtest.h>
#include <pthread.h>

#include <atomic>
#include <string>
#include <thread>

#include "core/events.h"
#include "util/sysinfo.h"

using namespace mwperf;

namespace {

Usage usage(std::initializer_list<ThreadTime> threads) {
  Usage u;
  u.threads = threads;
  return u;
}

}  // namespace

// A thread's CPU in the window is what it used since the window began; a
// thread that ended and whose tid went to a new one is another thread (the
// new one counts from 0), never a negative time.
TEST(Threads, CpuInTheWindowPerThreadName) {
  const Usage from = usage({{10, "rx", 1000, 50}, {11, "old", 5000, 60}});
  const Usage to = usage({{10, "rx", 1600, 50}, {11, "new", 300, 90}, {12, "new", 200, 95}});
  EXPECT_EQ(threads_json(from, to),
            R"([{"name":"new","cpu_ns":500,"threads":2,"own":false},{"name":"rx","cpu_ns":600,"threads":1,"own":false}])");
}

// usage_now() tells threads apart by when they started.
TEST(Threads, UsageKnowsWhenEachThreadStarted) {
  std::atomic<bool> up{false}, done{false};
  std::thread t([&] {
    pthread_setname_np(pthread_self(), "mwperf-tstart");
    up = true;
    while (!done) std::this_thread::yield();
  });
  while (!up) std::this_thread::yield();
  const Usage u = usage_now();
  done = true;
  t.join();
  int64_t mine = -1, its = -1;
  for (const ThreadTime& th : u.threads) {
    if (th.name == "mwperf-tstart") its = th.start;
    else if (th.tid == gettid()) mine = th.start;
  }
  EXPECT_GT(mine, 0);
  EXPECT_GE(its, mine);
}
