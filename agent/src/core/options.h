// The agent's command line, parsed into typed options, and the words it
// accepts (printed by `list`, so that the controller never keeps a copy).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/adapter.h"
#include "core/header.h"

namespace mwperf {

enum class Mode { latency, throughput, rate, burst };
enum class StampClock { monotonic, realtime };
const char* to_string(Mode m);
const char* to_string(StampClock c);

// The vocabulary (comma-separated lists).
constexpr const char* kModes = "latency,throughput,rate,burst";
constexpr const char* kWaits = "block,spin";
constexpr const char* kClocks = "monotonic,realtime";
constexpr const char* kReliabilities = "reliable,best-effort";
constexpr const char* kDurabilities = "volatile,transient-local";
constexpr const char* kCongestions = "block,drop";
constexpr int kMaxHistoryDepth = 1000000;
constexpr uint32_t kMaxInstances = 10000000;
constexpr double kMaxRateHz = 1e9;                         // a period of at least 1 ns
constexpr int64_t kMaxDurationNs = int64_t(1) << 55;       // about 1 year, far inside int64 arithmetic
constexpr size_t kDefaultStrided = 16384;
constexpr uint32_t kMaxReaders = 64;                      // --readers: the stop signal wakes this many

struct Options {
  std::string command;  // run | list | wakeup | version | clock
  Role role = Role::pub;
  std::string mw;
  Mode mode = Mode::latency;
  size_t size = 0;
  double rate_hz = 0;
  int64_t duration_ns = 5'000'000'000;
  int64_t warmup_ns = 1'000'000'000;
  uint64_t latency_count = 10000;
  uint64_t demand = 0;            // burst mode: samples written back to back per burst
  int64_t burst_gap_ns = 10'000'000;  // burst mode: the pause after each burst
  uint32_t subscribers = 1;       // pub: how many subscribers to wait for; sub: how many the publisher serves
  bool echo = true;               // sub: answer pings (one designated echoer among several subscribers)
  int64_t slow_ns = 0;            // sub: sleep this long after each sample (a slow reader)
  // sub: readers in this one process (--readers), each its own adapter
  // instance and session on its own thread; reader 0 echoes (with --echo 1),
  // the last one is the slow one (--slow-ns). `reader` is which one a
  // session is (set per reader by the agent, not an option).
  uint32_t readers = 1;
  uint32_t reader = 0;
  uint64_t count = 0;             // pub: stop after this many measured samples (0: run for the duration)
  std::string samples_out;        // file for the headline latency samples (little-endian int64 ns)
  size_t samples_max = kDefaultStrided;  // at most this many, evenly strided over the run
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  std::vector<uint16_t> ports;  // --port P[,P...]: every subscriber's (fan-out); port = the first
  int cpu = -1;
  WaitMode wait = WaitMode::block;
  uint32_t run_id = 1;            // names the run's topics, ports and segments
  // The key of every message's tag (core/header.h): from the run id unless
  // --key stdin, when the controller hands it over as the first line on
  // stdin (`key <32 hex digits>`; read_run_key in core/control.h).
  RunKey key = key_of_run_id(1);
  bool key_from_stdin = false;
  int64_t ping_timeout_ns = 1'000'000'000;
  int64_t match_timeout_ns = 10'000'000'000;
  // sub: after the stop, how long the data path may be quiet before what is
  // missing counts as lost; -1: 4 s under reliable QoS (a repair may wait for
  // the writer's next heartbeat: Fast DDS's come every 3 s), else 0.5 s.
  int64_t drain_ns = -1;
  uint64_t seq_start = 0;
  double precision = 0;     // adaptive stop: relative half-width of the p50 and p99 CIs; 0 = fixed duration
  double confidence = 0.95; // of every interval reported and of the stop rule
  StampClock clock = StampClock::monotonic;
  int64_t clock_offset_ns = 0;  // sub: subtracted from every one-way latency (the other host's clock offset)
  // sub: how far a send stamp may lie outside [this agent's start, now] and
  // still be of this run (what the two clocks can disagree by; 0 on one clock)
  int64_t stamp_slack_ns = 10'000'000'000;
  AdapterConfig qos;
  // wakeup probe
  int cpu_a = 0, cpu_b = 1;
  int iterations = 20000;
};

// Parses argv into *o. Returns "" on success, otherwise one line that names the
// bad option and value (the caller prints it and exits 2). Whether the
// adapter can honour the options is checked against its Description
// (core/description.h), not here.
std::string parse_options(int argc, const char* const* argv, Options* o);

// Each reader's options (--readers N): reader 0 answers pings (with --echo 1),
// the others only listen; the last is the slow one (--slow-ns), so with two
// or more readers the slow one never echoes; reader i > 0 writes its samples
// to "<samples-out stem>.sub<i><ext>" and binds ports[i]. One reader: the
// options as given.
std::vector<Options> reader_options(const Options& o);

// What one reader's (or the publisher's) adapter is opened with.
AdapterConfig adapter_config(const Options& reader);

}  // namespace mwperf
