// The one table of adapters. An adapter is compiled in by its CMake option,
// which defines MWPERF_WITH_<NAME>, and registered here.
#include "adapters/registry.h"

namespace mwperf {

std::unique_ptr<Adapter> make_udp_adapter();
std::unique_ptr<Adapter> make_tcp_adapter();
std::unique_ptr<Adapter> make_cyclonedds_adapter();
std::unique_ptr<Adapter> make_fastdds_adapter();

namespace {
const AdapterEntry kAdapters[] = {
#ifdef MWPERF_WITH_UDP
    {"udp", make_udp_adapter},
#endif
#ifdef MWPERF_WITH_TCP
    {"tcp", make_tcp_adapter},
#endif
#ifdef MWPERF_WITH_CYCLONEDDS
    {"cyclonedds", make_cyclonedds_adapter},
#endif
#ifdef MWPERF_WITH_FASTDDS
    {"fastdds", make_fastdds_adapter},
#endif
    {nullptr, nullptr},
};
}  // namespace

const AdapterEntry* adapters_begin() { return kAdapters; }
const AdapterEntry* adapters_end() { return kAdapters + (sizeof kAdapters / sizeof kAdapters[0]) - 1; }

std::unique_ptr<Adapter> make_adapter(const std::string& name) {
  for (const AdapterEntry* e = adapters_begin(); e != adapters_end(); ++e)
    if (name == e->name) return e->make();
  return nullptr;
}

const char* missing_adapters() { return MWPERF_MISSING_ADAPTERS; }

}  // namespace mwperf
