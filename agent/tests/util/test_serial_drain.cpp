#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "util/serial_drain.h"

using namespace mwperf;

namespace {

// A middleware in miniature: it calls the listener holding its reader lock,
// and take() needs the same lock (as Fast DDS does).
struct Reader {
  std::recursive_mutex mu;
  std::deque<int> queue;
  bool take(int* v) {
    std::lock_guard<std::recursive_mutex> lk(mu);
    if (queue.empty()) return false;
    *v = queue.front();
    queue.pop_front();
    return true;
  }
};

}  // namespace

// Two receive threads deliver under the reader lock while the agent's own
// first drain runs: every item is taken exactly once, none is left behind
// (no final drain after the threads end), and nobody deadlocks.
TEST(SerialDrain, EveryItemOnceNoneLeftNoDeadlock) {
  constexpr int kPerThread = 200000;
  Reader reader;
  SerialDrain drain;
  std::vector<int> seen(2 * kPerThread, 0);
  int delivered = 0;  // only the drainer touches it
  auto take_all = [&] {
    int v;
    while (reader.take(&v)) {
      ++seen[size_t(v)];
      ++delivered;
    }
  };
  auto done = std::async(std::launch::async, [&] {
    std::vector<std::thread> rx;
    for (int t = 0; t < 2; ++t)
      rx.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i) {
          std::lock_guard<std::recursive_mutex> lk(reader.mu);  // the listener runs under the reader's lock
          reader.queue.push_back(t * kPerThread + i);
          drain.run(take_all);
        }
      });
    for (int i = 0; i < 1000; ++i) drain.run(take_all);  // the agent's own drain, concurrently
    for (auto& th : rx) th.join();
  });
  if (done.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    ADD_FAILURE() << "deadlock: the drain did not finish within 20 s";
    std::_Exit(1);
  }
  EXPECT_EQ(delivered, 2 * kPerThread);
  EXPECT_TRUE(reader.queue.empty());
  for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], 1) << "item " << i;
}

// A caller that finds a drain in progress returns at once; the drainer goes
// round again and takes what that caller announced.
TEST(SerialDrain, LateCallerIsServedByTheDrainer) {
  SerialDrain drain;
  std::promise<void> in_pass, go_on;
  std::shared_future<void> go = go_on.get_future().share();
  int passes = 0;
  std::thread drainer([&] {
    drain.run([&] {
      if (++passes == 1) {
        in_pass.set_value();
        go.wait();
      }
    });
  });
  in_pass.get_future().wait();
  int late_ran = 0;
  drain.run([&] { ++late_ran; });  // returns at once: the drainer is busy
  EXPECT_EQ(late_ran, 0);
  go_on.set_value();
  drainer.join();
  EXPECT_EQ(passes, 2);  // one more pass for the late caller
}
