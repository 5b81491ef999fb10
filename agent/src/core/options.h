// The agent's command line, parsed into typed options by the option table
// (core/option_table.h), which `list` publishes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/adapter.h"
#include "core/discovery.h"
#include "core/floor.h"
#include "core/header.h"

namespace mwperf {

enum class Mode { latency, throughput, rate, burst };
enum class StampClock { monotonic, realtime };
const char* to_string(Mode m);
const char* to_string(StampClock c);

// Limits the option table's ranges are made of (core/option_table.cpp).
constexpr int kMaxHistoryDepth = 1000000;
constexpr uint32_t kMaxInstances = 10000000;
constexpr double kMaxRateHz = 1e9;                    // a period of at least 1 ns
constexpr int64_t kMaxDurationNs = int64_t(1) << 55;  // about 1 year, far inside int64 arithmetic
constexpr uint32_t kMaxReaders = 64;                  // --subscribers: the stop signal wakes this many readers
constexpr uint32_t kMaxPublishers = 64;               // --publishers: the sequence spaces one subscriber tracks
constexpr int kPublisherShift = 48;                   // publisher p's sequence numbers start at --seq-start + p << 48

struct OptionRow;

// The options of one agent. Every field an option sets starts at that
// option's default (the table's, core/option_table.cpp, applied by the
// constructor); the rest are set by the agent itself.
struct Options {
  Options();

  std::string command;  // run | list | wakeup | floor | discover | version | clock | cleanup
  Role role = Role::pub;
  std::string mw;
  std::string peer_mw;  // cross-vendor: the subscriber's middleware (the controller starts it)
  Mode mode = Mode::latency;
  size_t size = 0;
  double rate_hz = 0;
  int64_t duration_ns = 0;
  int64_t warmup_ns = 0;
  uint64_t latency_count = 0;
  uint64_t demand = 0;                  // burst mode: samples written back to back per burst
  int64_t burst_gap_ns = 0;             // burst mode: the pause after each burst
  uint32_t subscribers = 1;             // the point's subscribers (the publisher waits for as many)
  bool subscribers_as_threads = false;  // sub: the N subscribers are N readers of this process
  uint32_t subscriber_index = 0;        // sub, as processes: which one this process is
  int64_t slow_ns = 0;                  // the slow subscriber's sleep after each sample (--slow-subscriber)
  std::string payload = "pattern";      // what the body of every message holds (core/payload.h)
  bool check_payload = false;           // sub: compare every measured sample's body with what --payload sends
  uint32_t publishers = 1;              // sub: the topic's publishers, each its own sequence space (N:M)
  // Set per reader by reader_options(), not options: this reader's place
  // among the readers of this process, and whether it answers pings.
  uint32_t readers = 1;
  uint32_t reader = 0;
  bool echo = true;
  uint64_t samples = 0;     // pub: stop after this many measured samples (0: run for the duration)
  std::string samples_out;  // file for the headline latency samples (little-endian int64 ns)
  size_t samples_max = 0;   // at most this many, evenly strided over the run
  std::string host;
  uint16_t port = 0;
  std::vector<uint16_t> ports;  // --port P[,P...]: every subscriber's (fan-out); port = the first
  int cpu = -1;
  WaitMode wait = WaitMode::block;
  uint32_t run_id = 1;  // names the run's topics, ports and segments
  // The key of every message's tag (core/header.h): from the run id unless
  // --key stdin, when the controller hands it over as the first line on
  // stdin (`key <32 hex digits>`; read_run_key in core/control.h).
  RunKey key = key_of_run_id(1);
  bool key_from_stdin = false;
  int64_t ping_timeout_ns = 0;
  int64_t match_timeout_ns = 0;
  // sub: after the stop, how long the data path may be quiet before what is
  // missing counts as lost; -1: 4 s under reliable QoS (a repair may wait for
  // the writer's next heartbeat: Fast DDS's come every 3 s), else 0.5 s.
  int64_t drain_ns = -1;
  uint64_t seq_start = 0;
  // --reuse: the largest message the pair is opened for (0: one point, no
  // `next`), and which point of the pair these options are (0 the first).
  uint64_t reuse = 0;
  uint32_t pair_point = 0;
  double precision = 0;   // adaptive stop: relative half-width of the p50 and p99 CIs; 0 = fixed duration
  double confidence = 0;  // of every interval reported and of the stop rule
  double stop_loss = 0;   // adaptive stop of a rate point on its loss: the share it is judged against; 0 = none
  StampClock clock = StampClock::monotonic;
  int64_t clock_offset_ns = 0;  // sub: subtracted from every one-way latency (the other host's clock offset)
  // sub: how far a send stamp may lie outside [this agent's start, now] and
  // still be of this run (what the two clocks can disagree by; 0 on one clock)
  int64_t stamp_slack_ns = 0;
  AdapterConfig qos;
  // wakeup probe
  int cpu_a = 0, cpu_b = 1;
  int iterations = 0;
  FloorOptions floor;          // `floor`
  DiscoveryOptions discovery;  // `discover`
  // The options given on the command line (row and text), for the refusals.
  std::vector<std::pair<const OptionRow*, std::string>> given;
  // The text given for option `name`, nullptr if it was not given.
  const std::string* given_text(const char* name) const;
};

// Parses argv into *o. Returns "" on success, otherwise one line that names the
// bad option and value (the caller prints it and exits 2). Whether the
// adapter can honour the options is checked against its Description
// (core/description.h), not here.
std::string parse_options(int argc, const char* const* argv, Options* o);

// An agent pair (--reuse): point `point` (1, 2, ...) of the pair started
// by `base`, from the arguments of its `next` line (--NAME VALUE of rows
// marked pair, %-escaped): *out is base with these in place, numbering its
// samples from base's --seq-start + point << kPairPointShift (late samples of
// an earlier point are foreign, never this point's). "" or one line naming
// what is wrong.
constexpr unsigned kPairPointShift = 40;
constexpr uint32_t kMaxPairPoints = 256;  // point << 40 stays below the publishers' 2^48 (N:M)
static_assert((uint64_t(kMaxPairPoints) << kPairPointShift) <= (uint64_t(1) << kPublisherShift),
              "a pair's points never reach publisher 1's sequence space");
std::string parse_next(const Options& base, const std::string& args, uint32_t point, Options* out);

// Each reader's options: one, or --subscribers N of them with
// --subscribers-as threads. Subscriber g (the process's --subscriber-index
// plus the reader's place) answers pings when g is 0 and is the slow one
// (--slow-subscriber) when it is the last of --subscribers, so with two or
// more the slow one never echoes; subscriber g > 0 writes its samples to
// "<samples-out stem>.sub<g><ext>"; reader i binds ports[i].
std::vector<Options> reader_options(const Options& o);

// A secured point's --enclave (core/security.h): "" or one line naming what
// is missing; checked after the adapter's refusals (which come first).
std::string check_enclave(const Options& o);

// What one reader's (or the publisher's) adapter is opened with.
AdapterConfig adapter_config(const Options& reader);

}  // namespace mwperf
