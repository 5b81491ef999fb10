// What an adapter can honour, as the one place that refuses the rest and as
// the JSON the controller validates against.
#pragma once
#include <string>

#include "core/adapter.h"
#include "core/option_table.h"
#include "core/options.h"

namespace mwperf {

// Settles what the adapter decides from the options given: a spinning side
// whose adapter delivers on its own thread by default (a listener) polls the
// first way it can (added to o->given, as if asked for).
void settle(Options* o, const Description& d);
// "" when the adapter named `mw` can run `o` as asked; otherwise one line
// naming the option, the value and the middleware. The option table's rows
// (their capabilities), limit rules and conflict rules decide.
std::string refuse(const std::string& mw, const Description& d, const Options& o);

// One `list` line: {"event":"adapter","name":...}.
// `dir` (ending in /) is where the agent executable lies, for service_config.
std::string adapter_event(const std::string& name, const std::string& version, const Description& d,
                          const std::string& dir);
// The first `list` line: the agent, the timing its deadlines need, and the
// adapters it was built without (each "name: reason"). The option table is
// the `options` line (core/option_table.h).
std::string agent_event(const std::string& missing);

}  // namespace mwperf
