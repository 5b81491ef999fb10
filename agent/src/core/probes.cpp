// The agent's probes of the machine it runs on:
// `wakeup`: the cost of waking a blocked thread on another core versus the
// same core (two threads ping-pong through eventfds). On VMs whose idle vCPUs
// halt, this dominates every cross-core latency figure.
// `clock`: this host's clocks, one reading per line the controller writes
// (the controller estimates the offset between two hosts from them).
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdio>
#include <thread>

#include "core/session.h"
#include "core/stats.h"
#include "util/clock.h"
#include "util/json.h"
#include "util/sysinfo.h"

namespace mwperf {

int run_wakeup_probe(const Options& o) {
  const int ab = eventfd(0, EFD_CLOEXEC), ba = eventfd(0, EFD_CLOEXEC);
  if (ab < 0 || ba < 0) {
    emit(JsonObject().str("event", "error").str("error", "eventfd failed").done());
    return 3;
  }
  const int warm = 1000;
  const int total = warm + o.iterations;
  std::string pin_b;
  std::thread peer([&] {
    pin_b = pin_to_cpu(o.cpu_b);
    uint64_t v;
    for (int i = 0; i < total; ++i) {
      if (read(ab, &v, sizeof v) != sizeof v) return;
      v = 1;
      if (write(ba, &v, sizeof v) != sizeof v) return;
    }
  });
  const std::string pin_a = pin_to_cpu(o.cpu_a);
  LatencyStats rtt;
  uint64_t v = 1;
  for (int i = 0; i < total; ++i) {
    const int64_t t = now_ns();
    v = 1;
    if (write(ab, &v, sizeof v) != sizeof v || read(ba, &v, sizeof v) != sizeof v) break;
    if (i >= warm) rtt.add(now_ns() - t);
  }
  peer.join();
  close(ab);
  close(ba);
  if (!pin_a.empty() || !pin_b.empty()) {
    emit(JsonObject().str("event", "error").str("error", pin_a.empty() ? pin_b : pin_a).done());
    return 3;
  }
  const Summary s = rtt.summarize();
  emit(JsonObject()
           .str("event", "wakeup")
           .ints("cpus", {o.cpu_a, o.cpu_b})
           .num("iterations", o.iterations)
           .raw("rtt_ns", stats_json(s))
           .num("wakeup_p50_ns", s.p50.v / 2)
           .num("wakeup_p99_ns", s.p99.v / 2)
           .done());
  return 0;
}

int run_clock_probe() {
  char line[64];
  while (std::fgets(line, sizeof line, stdin))
    emit(JsonObject().str("event", "clock").num("mono_ns", now_ns()).num("real_ns", realtime_ns()).done());
  return 0;
}

}  // namespace mwperf
