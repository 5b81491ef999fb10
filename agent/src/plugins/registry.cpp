// The one table of adapters. An adapter's CMake option defines
// MWPERF_WITH_<NAME> where it is compiled in, MWPERF_PLUGIN_<NAME> where it is
// a plugin; it is registered here.
#include "plugins/registry.h"

#include "adapters/connext/connext_leftovers.h"
#include "plugins/plugins.h"

namespace mwperf {

std::unique_ptr<Adapter> make_udp_adapter();
std::unique_ptr<Adapter> make_tcp_adapter();
std::unique_ptr<Adapter> make_cyclonedds_adapter();
std::unique_ptr<Adapter> make_fastdds_adapter();
std::unique_ptr<Adapter> make_fastdds_jazzy_adapter();
std::unique_ptr<Adapter> make_connext_adapter();
std::unique_ptr<Adapter> make_ros2_adapter();
std::unique_ptr<Adapter> make_iceoryx_adapter();
std::unique_ptr<Adapter> make_ros1_adapter();
std::unique_ptr<Adapter> make_zenoh_adapter();
std::unique_ptr<Adapter> make_iceoryx2_adapter();

namespace {
const AdapterEntry kAdapters[] = {
#if defined(MWPERF_WITH_UDP)
    {"udp", make_udp_adapter, nullptr},
#elif defined(MWPERF_PLUGIN_UDP)
    {"udp", nullptr, nullptr},
#endif
#if defined(MWPERF_WITH_TCP)
    {"tcp", make_tcp_adapter, nullptr},
#elif defined(MWPERF_PLUGIN_TCP)
    {"tcp", nullptr, nullptr},
#endif
#if defined(MWPERF_WITH_CYCLONEDDS)
    {"cyclonedds", make_cyclonedds_adapter, nullptr},
#elif defined(MWPERF_PLUGIN_CYCLONEDDS)
    {"cyclonedds", nullptr, nullptr},
#endif
#if defined(MWPERF_WITH_FASTDDS)
    {"fastdds", make_fastdds_adapter, nullptr},
#elif defined(MWPERF_PLUGIN_FASTDDS)
    {"fastdds", nullptr, nullptr},
#endif
#if defined(MWPERF_WITH_FASTDDS_JAZZY)
    {"fastdds-jazzy", make_fastdds_jazzy_adapter},
#elif defined(MWPERF_PLUGIN_FASTDDS_JAZZY)
    {"fastdds-jazzy", nullptr},
#endif
#if defined(MWPERF_WITH_CONNEXT)
    {"connext", make_connext_adapter, clean_connext_stale},
#elif defined(MWPERF_PLUGIN_CONNEXT)
    {"connext", nullptr, clean_connext_stale},
#endif
#if defined(MWPERF_WITH_ICEORYX)
    {"iceoryx", make_iceoryx_adapter, nullptr},
#elif defined(MWPERF_PLUGIN_ICEORYX)
    {"iceoryx", nullptr, nullptr},
#endif
#if defined(MWPERF_WITH_ZENOH)
    {"zenoh", make_zenoh_adapter, nullptr},
#elif defined(MWPERF_PLUGIN_ZENOH)
    {"zenoh", nullptr, nullptr},
#endif
#if defined(MWPERF_WITH_ICEORYX2)
    {"iceoryx2", make_iceoryx2_adapter, nullptr},
#elif defined(MWPERF_PLUGIN_ICEORYX2)
    {"iceoryx2", nullptr, nullptr},
#endif
#if defined(MWPERF_WITH_ROS1)
    {"ros1", make_ros1_adapter, nullptr},
#elif defined(MWPERF_PLUGIN_ROS1)
    {"ros1", nullptr, nullptr},
#endif
#if defined(MWPERF_WITH_ROS2)
    {"ros2", make_ros2_adapter, nullptr},
#elif defined(MWPERF_PLUGIN_ROS2)
    {"ros2", nullptr, nullptr},
#endif
    {nullptr, nullptr, nullptr},
};
}  // namespace

const AdapterEntry* adapters_begin() { return kAdapters; }
const AdapterEntry* adapters_end() { return kAdapters + (sizeof kAdapters / sizeof kAdapters[0]) - 1; }

const AdapterEntry* find_adapter(const std::string& name) {
  for (const AdapterEntry* e = adapters_begin(); e != adapters_end(); ++e)
    if (name == e->name) return e;
  return nullptr;
}

std::unique_ptr<Adapter> make_adapter(const std::string& name, std::string* why) {
  std::string reason;
  const AdapterEntry* e = find_adapter(name);
  if (e != nullptr && e->make != nullptr) return e->make();
  const Plugin* p = e != nullptr ? load_plugin(name, &reason) : nullptr;
  if (why != nullptr) *why = e == nullptr ? "not an adapter of this agent" : reason;
  return p != nullptr ? p->make() : nullptr;
}

const char* missing_adapters() { return MWPERF_MISSING_ADAPTERS; }

}  // namespace mwperf
