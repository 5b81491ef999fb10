// `mwperf-agent floor`: its options and the events it reports (core/floor.h,
// docs/agent-protocol.md).
#include "core/floor.h"

#include <signal.h>
#include <sys/prctl.h>

#include <charconv>
#include <cstdio>

#include "core/events.h"
#include "util/clock.h"
#include "util/json.h"
#include "util/own_threads.h"
#include "util/sysinfo.h"

namespace mwperf {

const char* placement_name(int cpu_a, int cpu_b) {
  if (cpu_a < 0 || cpu_b < 0) return "unpinned";
  return cpu_a == cpu_b ? "same-core" : "cross-core";
}

namespace {

template <typename T>
bool whole(const std::string& s, T* out) {
  const char* end = s.data() + s.size();
  const auto [at, ec] = std::from_chars(s.data(), end, *out);
  return !s.empty() && ec == std::errc() && at == end;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> items;
  size_t start = 0;
  for (size_t comma; (comma = s.find(',', start)) != std::string::npos; start = comma + 1)
    items.push_back(s.substr(start, comma - start));
  items.push_back(s.substr(start));
  return items;
}

std::string bad(const std::string& opt, const std::string& val, const char* why) {
  return "--" + opt + ": '" + val + "' " + why;
}

std::string parse_one(const std::string& k, const std::string& v, FloorOptions* o) {
  if (k == "sizes") {
    o->sizes.clear();
    for (const std::string& item : split(v)) {
      size_t size = 0;
      if (!whole(item, &size) || size < 1 || size > kFloorMaxSize || o->sizes.size() >= 256)
        return bad(k, v, "must be up to 256 message sizes in bytes, each 1 to 67108864");
      o->sizes.push_back(size);
    }
  } else if (k == "cpus") {
    const std::vector<std::string> cpus = split(v);
    if (cpus.size() != 2 || !whole(cpus[0], &o->cpu_a) || !whole(cpus[1], &o->cpu_b) || o->cpu_a < -1 ||
        o->cpu_b < -1 || o->cpu_a > 4095 || o->cpu_b > 4095)
      return bad(k, v, "must be two cores A,B (the publisher's and the subscriber's; -1: unpinned)");
  } else if (k == "wait") {
    if (v != "block" && v != "spin") return bad(k, v, "is not block or spin");
    o->wait = v == "spin" ? WaitMode::spin : WaitMode::block;
  } else if (k == "budget-ns" || k == "timeout-ns") {
    int64_t ns = 0;
    if (!whole(v, &ns) || ns < 1'000'000 || ns > 600'000'000'000)
      return bad(k, v, "must be a time in nanoseconds from 1 ms (1000000) to 10 minutes");
    (k == "budget-ns" ? o->budget_ns : o->timeout_ns) = ns;
  } else if (k == "iterations") {
    if (!whole(v, &o->iterations) || o->iterations < 1 || o->iterations > 100'000'000)
      return bad(k, v, "must be a number of samples from 1 to 100000000");
  } else if (k == "kinds") {
    o->kinds = split(v);
    for (const std::string& kind : o->kinds)
      if (kind != "memcpy" && kind != "unix" && kind != "udp" && kind != "shm")
        return bad(k, v, "must be a list of memcpy, unix, udp, shm");
  } else {
    return "--" + k + ": unknown option of floor";
  }
  return "";
}

JsonObject header(const FloorOptions& o, const std::string& kind, const char* method, size_t size) {
  JsonObject j;
  j.str("event", "floor").str("kind", kind).str("method", method).unum("size", size)
      .ints("cpus", {o.cpu_a, o.cpu_b}).str("placement", placement_name(o.cpu_a, o.cpu_b))
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
    return header(o, kind, "memcpy", size).unum("batch", batch).raw("batch_ns", stats_json(s))
        .real("bytes_per_s", s.p50.ok && s.p50.v > 0 ? double(size) * double(batch) * 1e9 / double(s.p50.v) : 0)
        .num("elapsed_ns", r.elapsed_ns).done();
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
  return header(o, kind, link->method(), size).raw("rtt_ns", stats_json(s)).raw("latency_ns", stats_json(halve(s)))
      .num("elapsed_ns", r.elapsed_ns).done();
}

}  // namespace

std::string parse_floor_options(int argc, const char* const* argv, FloorOptions* o) {
  for (int i = 2; i < argc; i += 2) {  // --option value, in pairs; the last of an option given twice holds
    const std::string option = argv[i];
    if (option.size() < 3 || option.compare(0, 2, "--") != 0) return "unexpected argument '" + option + "'";
    if (i + 1 == argc) return option + ": missing value";
    if (std::string e = parse_one(option.substr(2), argv[i + 1], o); !e.empty()) return e;
  }
  if (o->sizes.empty()) return "--sizes: missing (the message sizes to measure, e.g. 32,1024,63000)";
  return "";
}

int run_floor_command(int argc, char** argv) {
  FloorOptions o;
  if (const std::string e = parse_floor_options(argc, argv, &o); !e.empty()) {
    std::fprintf(stderr, "mwperf-agent: %s\n", e.c_str());
    return 2;
  }
  const OwnThread me("mwperf-main");
  prctl(PR_SET_PDEATHSIG, SIGTERM);  // never outlive the controller
  prctl(PR_SET_TIMERSLACK, 1UL);
  signal(SIGPIPE, SIG_IGN);
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
  emit(JsonObject().str("event", "floor_done").num("measurements", count).num("elapsed_ns", now_ns() - t0)
           .num("budget_ns", o.budget_ns).ints("cpus", {o.cpu_a, o.cpu_b})
           .str("placement", placement_name(o.cpu_a, o.cpu_b)).str("wait", o.wait == WaitMode::spin ? "spin" : "block")
           .done());
  return 0;
}

}  // namespace mwperf
