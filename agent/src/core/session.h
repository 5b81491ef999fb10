// One side of a test point: the publisher or the subscriber, built before the
// middleware is opened (so that its buffers are allocated and touched first
// and never counted as the middleware's memory), run once it is matched.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/adapter.h"
#include "core/control.h"
#include "core/events.h"
#include "core/options.h"
#include "core/stats.h"

namespace mwperf {

struct Outcome {
  int exit_code;     // 0 ok, 3 middleware failure
  std::string line;  // the JSON event to emit: `result`, or `error`
};

class Session {
 public:
  virtual ~Session() = default;
  // Bytes the core holds for this side (buffers and statistics).
  virtual size_t own_bytes() const = 0;
  // Called once the side is matched, before the subscriber says `matched`
  // (the publisher sends nothing before): a subscriber in listener mode sets
  // its listener here, before anything can be sent to it, so that every
  // sample is delivered on the middleware's own thread (a catch-up drain on
  // the agent's thread would find samples already waiting, and stay the one
  // draining while they keep coming). An error message, or "" when armed.
  virtual std::string arm() { return {}; }
  // Runs the measurement; the adapter is open and matched. `footprint` goes
  // into the result as measured before the middleware was opened.
  virtual Outcome run(int64_t discovery_ns, const Footprint& footprint) = 0;
};

std::unique_ptr<Session> make_publisher(const Options& o, Adapter& ad, StopSignal& stop);
std::unique_ptr<Session> make_subscriber(const Options& o, Adapter& ad, StopSignal& stop);
// Runs every side: in this thread when there is one, else one thread each
// ("mwperf-rd<i>"). The outcomes in the order of `sides`.
std::vector<Outcome> run_sessions(const std::vector<std::unique_ptr<Session>>& sides, int64_t discovery_ns,
                                  const std::vector<Footprint>& footprints);
int run_wakeup_probe(const Options& o);
int run_clock_probe();

// --samples-out: writes the headline statistic's kept samples and adds
// samples_written / samples_time_ordered to j.
void write_samples(JsonObject& j, const Options& o, const LatencyStats& s, int64_t divisor);

// How long a publisher keeps its endpoints after its result (its last
// sample) at most, waiting for the controller to close it: a writer torn down
// right after its last sample can lose it (Cyclone DDS drops a best-effort
// sample still in a reader's receive path when the writer's disposal
// overtakes it), and that would be the instrument's loss, not the
// middleware's. The controller closes the publisher's stdin once every
// subscriber has drained and said its result; this bound only matters when it
// does not (the agent run by hand keeps stdin open).
constexpr int64_t kCloseWaitNs = 10'000'000'000;

// A subscriber's drain after the stop without --drain (how long the data path
// may be quiet before what is missing counts as lost): a reliable repair may
// wait for the writer's next heartbeat (Fast DDS's come every 3 s).
constexpr int64_t kDrainReliableNs = 4'000'000'000;
constexpr int64_t kDrainBestEffortNs = 500'000'000;

// How long a blocking receive waits at most when the adapter cannot be woken.
constexpr int64_t kBlockSliceNs = 20'000'000;

}  // namespace mwperf
