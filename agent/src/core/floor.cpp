// `mwperf-agent floor`: the events it reports (core/floor.h, docs/agent-protocol.md);
// its options are rows of the option table.
#include "core/floor.h"

#include "core/events.h"
#include "util/clock.h"
#include "util/json.h"
#include "util/sysinfo.h"

namespace mwperf {

const char* placement_name(int cpu_a, int cpu_b) {
  if (cpu_a < 0 || cpu_b < 0) return "unpinned";
  return cpu_a == cpu_b ? "same-core" : "cross-core";
}

namespace {

JsonObject header(const FloorOptions& o, const std::string& kind, const char* method, size_t size) {
  JsonObject j;
  j.str("event", "floor")
      .str("kind", kind)
      .str("method", method)
      .unum("size", size)
      .ints("cpus", {o.cpu_a, o.cpu_b})
      .str("placement", placement_name(o.cpu_a, o.cpu_b))
      .str("wait", o.wait == WaitMode::spin ? "spin" : "block");
  return j;
}

// One measurement's event, or "" and *error set.
std::string measure(const FloorOptions& o, const std::string& kind, size_t size, std::string* error) {
  if (kind == "memcpy") {
    const size_t batch = memcpy_batch(size);
    LatencyStats stats;  // allocated before the timed loop
    const FloorResult r = floor_memcpy(o, size, batch, stats);
    const Summary s = stats.summarize();
    return header(o, kind, "memcpy", size)
        .unum("batch", batch)
        .raw("batch_ns", stats_json(s))
        .real("bytes_per_s", s.p50.ok && s.p50.v > 0 ? double(size) * double(batch) * 1e9 / double(s.p50.v) : 0)
        .num("elapsed_ns", r.elapsed_ns)
        .done();
  }
  auto link = kind == "shm" ? make_shm_link() : make_socket_link(kind == "udp");
  if (kind == "udp" && size > kUdpMaxPayload)
    return header(o, kind, link->method(), size).str("skipped", "UDP carries at most 65507 bytes per datagram").done();
  LatencyStats rtt;
  const FloorResult r = floor_pingpong(o, *link, size, rtt);
  if (!r.error.empty()) {
    *error = "floor " + kind + " (" + link->method() + ") " + std::to_string(size) + " B: " + r.error;
    return "";
  }
  const Summary s = rtt.summarize();
  return header(o, kind, link->method(), size)
      .raw("rtt_ns", stats_json(s))
      .raw("latency_ns", stats_json(halve(s)))
      .num("elapsed_ns", r.elapsed_ns)
      .done();
}

}  // namespace

int run_floor(const FloorOptions& o) {
  const auto fail = [](const std::string& why) {
    emit(JsonObject().str("event", "error").str("error", why).done());
    return 3;
  };
  if (const std::string e = pin_to_cpu(o.cpu_a); !e.empty()) return fail("floor: " + e);
  const int64_t t0 = now_ns();
  int count = 0;
  for (size_t size : o.sizes) {
    for (const std::string& kind : o.kinds) {
      std::string error;
      const std::string line = measure(o, kind, size, &error);
      if (!error.empty()) return fail(error);
      emit(line);
      ++count;
    }
  }
  emit(JsonObject()
           .str("event", "floor_done")
           .num("measurements", count)
           .num("elapsed_ns", now_ns() - t0)
           .num("budget_ns", o.budget_ns)
           .ints("cpus", {o.cpu_a, o.cpu_b})
           .str("placement", placement_name(o.cpu_a, o.cpu_b))
           .str("wait", o.wait == WaitMode::spin ? "spin" : "block")
           .done());
  return 0;
}

}  // namespace mwperf
