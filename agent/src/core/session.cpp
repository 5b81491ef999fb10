#include "core/session.h"

#include <pthread.h>

#include <thread>

namespace mwperf {

std::vector<Outcome> run_sessions(const std::vector<std::unique_ptr<Session>>& sides, int64_t discovery_ns,
                                  const std::vector<Footprint>& footprints) {
  std::vector<Outcome> outs(sides.size());
  if (sides.size() == 1) {
    outs[0] = sides[0]->run(discovery_ns, footprints[0]);
    return outs;
  }
  std::vector<std::thread> threads;
  for (size_t i = 0; i < sides.size(); ++i)
    threads.emplace_back([&, i] {
      const std::string name = "mwperf-rd" + std::to_string(i);
      pthread_setname_np(pthread_self(), name.c_str());
      outs[i] = sides[i]->run(discovery_ns, footprints[i]);
    });
  for (auto& t : threads) t.join();
  return outs;
}

}  // namespace mwperf
