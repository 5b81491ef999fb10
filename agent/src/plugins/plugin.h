// The one C entry point of an adapter plugin (adapters/libmwperf-<name>.so,
// next to the agent): `mwperf_plugin_v1()` returns what the plugin holds, the
// adapter's name and factory (its description is the adapter's own), and what
// it was built against. C++ classes cross this boundary, so the agent loads a
// plugin only when the build matches: the ABI number (raised when the Adapter
// interface changes), the agent's version, the compiler, and the sizes of the
// structures passed across (a cheap catch of an interface changed without it).
#pragma once
#include <cstddef>
#include <memory>

#include "core/adapter.h"

namespace mwperf {

// 5: DiscoveryOptions gained threads, hosted and stride (the adapters read it); Description, discoveries and
// discovery_note.
constexpr int kPluginAbi = 5;

struct Plugin {
  int abi;                  // kPluginAbi
  const char* version;      // MWPERF_VERSION
  const char* compiler;     // __VERSION__
  size_t description_size;  // sizeof(Description)
  size_t config_size;       // sizeof(AdapterConfig)
  const char* name;         // the adapter's (`--mw`)
  std::unique_ptr<Adapter> (*make)();
};

// The build's own values of the checked fields, for `name`'s factory.
#define MWPERF_PLUGIN_INIT(name, make)                                                                                 \
  {                                                                                                                    \
    ::mwperf::kPluginAbi, MWPERF_VERSION, __VERSION__, sizeof(::mwperf::Description), sizeof(::mwperf::AdapterConfig), \
        name, make                                                                                                     \
  }

}  // namespace mwperf

#define MWPERF_PLUGIN_ENTRY mwperf_plugin_v1
extern "C" const mwperf::Plugin* mwperf_plugin_v1();
