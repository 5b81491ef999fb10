// The agent's events on the control channel (docs/agent-protocol.md): the
// fields both roles' results share, statistics, errors.
#pragma once
#include <string>

#include "core/adapter.h"
#include "core/monitor.h"
#include "core/options.h"
#include "core/stats.h"
#include "util/json.h"
#include "util/sysinfo.h"

namespace mwperf {

// Memory the core holds for itself (buffers, statistics), allocated and
// touched before the middleware is opened; and the RSS read right before
// opening it: the middleware's own memory is what the peak adds to that.
struct Footprint {
  long own_kb = 0;
  long rss_before_open_kb = 0;
};

void common_fields(JsonObject& j, const Options& o, const Adapter& ad, const Footprint& f);
std::string error_event(const Options& o, const std::string& message);
std::string stats_json(const Summary& s);
// CPU per thread name over a window: [{"name":"recvUC","cpu_ns":N,"threads":1,"own":false},...];
// "own": threads of mwperf's (registered by id when mwperf created them); every
// other thread is the middleware's, even one that inherited a name "mwperf-...".
std::string threads_json(const Usage& from, const Usage& to);
// null when not reached; intervals divided by `divisor` (2: RTT -> one-way).
std::string convergence_json(const Convergence& c, int64_t divisor);

}  // namespace mwperf
