// What an adapter can honour, as the one place that refuses the rest and as
// the JSON the controller validates against.
#pragma once
#include <string>

#include "core/adapter.h"
#include "core/options.h"

namespace mwperf {

// "" when the adapter named `mw` can run `o` as asked; otherwise one line
// naming the option, the value and the middleware.
std::string refuse(const std::string& mw, const Description& d, const Options& o);

// One `list` line: {"event":"adapter","name":...}.
// `dir` (ending in /) is where the agent executable lies, for service_config.
std::string adapter_event(const std::string& name, const std::string& version, const Description& d,
                          const std::string& dir);
// The first `list` line: the agent, its vocabulary and limits, and the
// adapters it was built without (each "name: reason").
std::string agent_event(const std::string& missing);

}  // namespace mwperf
