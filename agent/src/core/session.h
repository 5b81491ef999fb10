// The two roles of a test point. Each returns the `result` event line, or an
// `error` event line with exit code 3 when the middleware fails mid-run.
#pragma once
#include <cstdint>
#include <string>

#include "adapters/adapter.h"
#include "core/control.h"
#include "core/options.h"
#include "core/stats.h"

namespace mwperf {

struct Outcome {
  int exit_code;     // 0 ok, 3 middleware failure
  std::string line;  // the JSON event to emit
};

// The publisher ends early when `stop` arrives on stdin (adaptive duration).
Outcome run_pub(const Options& o, Adapter& ad, int64_t discovery_ns, StopSignal& stop);
Outcome run_sub(const Options& o, Adapter& ad, StopSignal& stop);
int run_wakeup_probe(const Options& o);

// Fields common to both roles' result events.
class JsonObject;
void common_fields(JsonObject& j, const Options& o, const Adapter& ad);
std::string error_event(const Options& o, const std::string& message);
// --samples-out: writes the headline statistic's samples (before it is
// summarised) and adds samples_written / samples_time_ordered to j.
void write_samples(JsonObject& j, const Options& o, const LatencyStats& s, int64_t divisor);

constexpr int64_t kConvergenceCheckNs = 250'000'000;  // adaptive stop: how often the CIs are checked
constexpr int64_t kConvergenceMinNs = 500'000'000;    // ... and not before this much measuring
constexpr int64_t kBlockSliceNs = 20'000'000;  // longest a blocking recv waits before the loop looks around

}  // namespace mwperf
