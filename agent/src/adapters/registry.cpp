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
#ifdef MWPERF_WITH_CYCLONEDDS
std::unique_ptr<Adapter> make_cyclonedds_adapter();
#endif
#ifdef MWPERF_WITH_FASTDDS
std::unique_ptr<Adapter> make_fastdds_adapter();
#endif

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

std::string unsupported_option(const char* mw, const Capabilities& c, const AdapterConfig& cfg) {
  const std::string m(mw);
  auto no = [&](const std::string& opt, const std::string& val) {
    return "--" + opt + " " + val + ": not supported by " + m;
  };
  if (cfg.reliability == "reliable" && !c.reliable) return no("reliability", "reliable");
  if (cfg.reliability == "best-effort" && !c.best_effort) return no("reliability", "best-effort");
  if ((cfg.history_depth != 0 || cfg.keep_all) && !c.history)
    return no("history", cfg.keep_all ? "keep-all" : "keep-last:" + std::to_string(cfg.history_depth));
  if (!cfg.durability.empty() && !c.durability) return no("durability", cfg.durability);
  if (cfg.instances > 0 && !c.keyed) return no("instances", std::to_string(cfg.instances)) + " (keyed topics)";
  if (cfg.async && !c.async) return no("async", "") + " (no asynchronous publishing)";
  if (cfg.batch && !c.batching) return no("batch", "") + " (no write batching)";
  if (cfg.receive == "listener" && !c.listener) return no("receive", "listener");
  if (cfg.receive == "waitset" && !c.waitset) return no("receive", "waitset");
  if (!cfg.transport.empty()) {
    const std::string list = std::string(",") + c.transports + ",";
    if (list.find("," + cfg.transport + ",") == std::string::npos)
      return no("transport", cfg.transport) + " (choose from: " + (*c.transports ? c.transports : "none") + ")";
  }
  return "";
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
