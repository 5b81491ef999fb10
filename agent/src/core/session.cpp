#include "core/session.h"

#include <condition_variable>
#include <mutex>
#include <thread>

#include "util/own_threads.h"

namespace mwperf {

std::vector<Outcome> run_sessions(const std::vector<std::unique_ptr<Session>>& sides, int64_t discovery_ns,
                                  const std::vector<Footprint>& footprints) {
  std::vector<Outcome> outs(sides.size());
  if (sides.size() == 1) {
    outs[0] = sides[0]->run(discovery_ns, footprints[0]);
    return outs;
  }
  // No reader thread ends before every reader's run() has returned: reader
  // 0's result lists the process's threads, and a thread that has ended is
  // gone from /proc (with its CPU) when that list is read.
  std::mutex mu;
  std::condition_variable cv;
  size_t running = sides.size();
  std::vector<std::thread> threads;
  for (size_t i = 0; i < sides.size(); ++i)
    threads.emplace_back([&, i] {
      const OwnThread me(("mwperf-rd" + std::to_string(i)).c_str());
      outs[i] = sides[i]->run(discovery_ns, footprints[i]);
      std::unique_lock<std::mutex> lk(mu);
      if (--running == 0) cv.notify_all();
      cv.wait(lk, [&] { return running == 0; });
    });
  for (auto& t : threads) t.join();
  return outs;
}

}  // namespace mwperf
