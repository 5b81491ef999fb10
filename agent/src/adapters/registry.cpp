// The one table of adapters. An adapter is compiled into an agent by its CMake
// option, which defines MWPERF_WITH_<NAME> (built in) or MWPERF_COMPANION_<NAME>
// (the file name of the companion agent it runs in), and registered here.
#include "adapters/registry.h"

namespace mwperf {

std::unique_ptr<Adapter> make_udp_adapter();
std::unique_ptr<Adapter> make_tcp_adapter();
std::unique_ptr<Adapter> make_cyclonedds_adapter();
std::unique_ptr<Adapter> make_fastdds_adapter();
std::unique_ptr<Adapter> make_connext_adapter();
std::unique_ptr<Adapter> make_ros2_adapter();
std::unique_ptr<Adapter> make_iceoryx_adapter();
std::unique_ptr<Adapter> make_ros1_adapter();
std::unique_ptr<Adapter> make_zenoh_adapter();
std::unique_ptr<Adapter> make_iceoryx2_adapter();

namespace {
const AdapterEntry kAdapters[] = {
#ifdef MWPERF_WITH_UDP
    {"udp", make_udp_adapter, nullptr},
#endif
#ifdef MWPERF_WITH_TCP
    {"tcp", make_tcp_adapter, nullptr},
#endif
#ifdef MWPERF_WITH_CYCLONEDDS
    {"cyclonedds", make_cyclonedds_adapter, nullptr},
#endif
#ifdef MWPERF_WITH_FASTDDS
    {"fastdds", make_fastdds_adapter, nullptr},
#endif
#ifdef MWPERF_WITH_CONNEXT
    {"connext", make_connext_adapter, nullptr},
#endif
#ifdef MWPERF_WITH_ICEORYX
    {"iceoryx", make_iceoryx_adapter, nullptr},
#endif
#ifdef MWPERF_WITH_ZENOH
    {"zenoh", make_zenoh_adapter, nullptr},
#endif
#ifdef MWPERF_WITH_ICEORYX2
    {"iceoryx2", make_iceoryx2_adapter, nullptr},
#endif
#ifdef MWPERF_WITH_ROS1
    {"ros1", make_ros1_adapter, nullptr},
#endif
#if defined(MWPERF_WITH_ROS2)
    {"ros2", make_ros2_adapter, nullptr},
#elif defined(MWPERF_COMPANION_ROS2)
    {"ros2", nullptr, MWPERF_COMPANION_ROS2},
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

std::unique_ptr<Adapter> make_adapter(const std::string& name) {
  const AdapterEntry* e = find_adapter(name);
  return e != nullptr && e->make != nullptr ? e->make() : nullptr;
}

const char* missing_adapters() { return MWPERF_MISSING_ADAPTERS; }

}  // namespace mwperf
