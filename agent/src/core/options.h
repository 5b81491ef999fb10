// The agent's command line, parsed and validated into typed options.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "adapters/adapter.h"

namespace mwperf {

enum class Mode { latency, throughput, rate };
const char* to_string(Mode m);

struct Options {
  std::string command;  // run | list | wakeup | version
  Role role = Role::pub;
  std::string mw;
  Mode mode = Mode::latency;
  size_t size = 0;
  double rate_hz = 0;
  int64_t duration_ns = 5'000'000'000;
  int64_t warmup_ns = 1'000'000'000;
  uint64_t latency_count = 10000;
  uint64_t count = 0;     // pub: stop after this many measured samples (0: run for the duration)
  std::string samples_out;        // file for the headline latency samples (little-endian int64 ns)
  size_t samples_max = 16384;     // at most this many, evenly strided over the run
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  int cpu = -1;
  WaitMode wait = WaitMode::block;
  uint32_t run_id = 1;
  size_t max_samples = 1u << 20;
  int64_t ping_timeout_ns = 1'000'000'000;
  int64_t match_timeout_ns = 10'000'000'000;
  int64_t drain_ns = 500'000'000;
  uint64_t seq_start = 0;
  double precision = 0;   // adaptive stop: relative half-width of the p50 and p99 CIs; 0 = fixed duration
  double z = 1.96;        // --confidence 0.90 | 0.95 | 0.99
  AdapterConfig qos;  // reliability, history, durability, instances, async, receive, transport, nic, peer, domain
  // wakeup probe
  int cpu_a = 0, cpu_b = 1;
  int iterations = 20000;
};

// Parses argv into *o. Returns "" on success, otherwise one line that names the
// bad option and value (the caller prints it and exits 2).
std::string parse_options(int argc, const char* const* argv, Options* o);

}  // namespace mwperf
