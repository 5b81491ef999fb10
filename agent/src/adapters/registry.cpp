// The one table of adapters. Each adapter is compiled in by its CMake option
// (MWPERF_ADAPTER_<NAME>) and registered here, nowhere else.
#include "adapters/adapter.h"

namespace mwperf {

#ifdef MWPERF_WITH_UDP
std::unique_ptr<Adapter> make_udp_adapter();
#endif
#ifdef MWPERF_WITH_TCP
std::unique_ptr<Adapter> make_tcp_adapter();
#endif

namespace {
const AdapterEntry kAdapters[] = {
#ifdef MWPERF_WITH_UDP
    {"udp", make_udp_adapter},
#endif
#ifdef MWPERF_WITH_TCP
    {"tcp", make_tcp_adapter},
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

const char* to_string(Errc e) {
  switch (e) {
    case Errc::ok: return "ok";
    case Errc::timeout: return "timeout";
    case Errc::closed: return "closed";
    case Errc::too_big: return "too big";
    case Errc::unsupported: return "unsupported";
    case Errc::io: return "io error";
  }
  return "?";
}

}  // namespace mwperf
