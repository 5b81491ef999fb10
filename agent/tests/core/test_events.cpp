#include <gtest/gtest.h>
#include <pthread.h>

#include <time.h>

#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <thread>

#include "core/events.h"
#include "util/own_threads.h"
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
  EXPECT_EQ(
      threads_json(from, to),
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
    if (th.name == "mwperf-tstart")
      its = th.start;
    else if (th.tid == gettid())
      mine = th.start;
  }
  EXPECT_GT(mine, 0);
  EXPECT_GE(its, mine);
}

// A middleware thread that inherited mwperf's name (Fast DDS 2.9 and roscpp
// name none of theirs: they carry "mwperf-main") is still the middleware's:
// groups are by name and owner, the owner by thread id.
TEST(Threads, OwnIsByThreadIdNotByName) {
  ThreadTime main_thread{10, "mwperf-main", 1000, 50}, inherited{11, "mwperf-main", 2000, 60};
  main_thread.own = true;
  const Usage to = usage({main_thread, inherited});
  EXPECT_EQ(threads_json(Usage{}, to), R"([{"name":"mwperf-main","cpu_ns":2000,"threads":1,"own":false},)"
                                       R"({"name":"mwperf-main","cpu_ns":1000,"threads":1,"own":true}])");
}

// usage_now() marks as own exactly the threads registered while they are: a
// thread named like mwperf's but never registered is not, nor one registered
// no longer (its id may go to a thread of the middleware's).
TEST(Threads, OwnThreadsAreTheRegisteredOnes) {
  std::atomic<int> step{0};
  auto own_of = [](const char* name) {
    int found = -1;
    for (const ThreadTime& th : usage_now().threads)
      if (th.name == name) found = th.own;
    return found;
  };
  std::thread impostor([&] {
    pthread_setname_np(pthread_self(), "mwperf-fake");  // a name only
    step = 1;
    while (step < 2) std::this_thread::yield();
  });
  while (step < 1) std::this_thread::yield();
  EXPECT_EQ(own_of("mwperf-fake"), 0);
  step = 2;
  impostor.join();
  std::atomic<int> phase{0};
  std::thread ours([&] {
    {
      const OwnThread me("mwperf-ours");
      phase = 1;
      while (phase < 2) std::this_thread::yield();
    }
    phase = 3;
    while (phase < 4) std::this_thread::yield();
  });
  while (phase < 1) std::this_thread::yield();
  EXPECT_EQ(own_of("mwperf-ours"), 1);
  phase = 2;
  while (phase < 3) std::this_thread::yield();
  EXPECT_EQ(own_of("mwperf-ours"), 0);
  phase = 4;
  ours.join();
}

// The quick reading (a thread's CPU clock) agrees with schedstat's: a thread
// that spins 50 ms of its own CPU time shows at least that in both, and the
// two readings, taken one after the other, within 5 ms.
TEST(Threads, QuickReadingAgreesWithSchedstat) {
  std::atomic<int> step{0};
  std::thread spinner([&] {
    pthread_setname_np(pthread_self(), "spinner");
    timespec ts{};
    do clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    while (ts.tv_sec == 0 && ts.tv_nsec < 50'000'000);
    step = 1;
    while (step < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  while (step < 1) std::this_thread::yield();
  std::map<int, ThreadTime> known;
  const Usage quick = usage_quick(&known), full = usage_now();
  step = 2;
  spinner.join();
  int64_t q = -1, f = -1;
  for (const ThreadTime& t : quick.threads)
    if (t.name == "spinner") q = t.cpu_ns;
  for (const ThreadTime& t : full.threads)
    if (t.name == "spinner") f = t.cpu_ns;
  EXPECT_GE(q, 50'000'000);
  EXPECT_NEAR(double(q), double(f), 5e6);
  EXPECT_EQ(known.size(), quick.threads.size());  // each thread's name read once, kept
  // Ended, it keeps its last reading (the subscriber's control and monitor
  // threads end at the stop, before the last reading of its window).
  int64_t ended = -1;
  for (const ThreadTime& t : usage_quick(&known).threads)
    if (t.name == "spinner") ended = t.cpu_ns;
  EXPECT_EQ(ended, q);
}
