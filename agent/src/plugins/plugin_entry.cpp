// The entry point of one adapter's plugin, compiled into libmwperf-<name>.so
// with MWPERF_PLUGIN_NAME ("cyclonedds") and MWPERF_PLUGIN_MAKE
// (make_cyclonedds_adapter, defined in the adapter's file). See plugin.h.
#include "plugins/plugin.h"

namespace mwperf {
std::unique_ptr<Adapter> MWPERF_PLUGIN_MAKE();
}

extern "C" __attribute__((visibility("default"))) const mwperf::Plugin* mwperf_plugin_v1() {
  static const mwperf::Plugin plugin = MWPERF_PLUGIN_INIT(MWPERF_PLUGIN_NAME, mwperf::MWPERF_PLUGIN_MAKE);
  return &plugin;
}
