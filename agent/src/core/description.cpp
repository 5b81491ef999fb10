#include "core/description.h"

#include "core/header.h"
#include "core/stats.h"
#include "util/json.h"

namespace mwperf {
namespace {

bool listed(const char* list, const std::string& value) {
  const std::string l = std::string(",") + list + ",";
  return l.find("," + value + ",") != std::string::npos;
}

}  // namespace

std::string refuse(const std::string& mw, const Description& d, const Options& o) {
  const AdapterConfig& c = o.qos;
  auto no = [&](const std::string& opt, const std::string& val, const std::string& why = "") {
    return "--" + opt + (val.empty() ? "" : " " + val) + ": not supported by " + mw + (why.empty() ? "" : " (" + why + ")");
  };
  if (o.size > d.max_size)
    return "--size " + std::to_string(o.size) + ": " + mw + " carries at most " + std::to_string(d.max_size) + " bytes" +
           (*d.size_note ? std::string(" (") + d.size_note + ")" : std::string());
  if (!c.reliability.empty() && !listed(d.reliabilities, c.reliability)) return no("reliability", c.reliability);
  if ((c.history_depth != 0 || c.keep_all) && !d.history)
    return no("history", c.keep_all ? "keep-all" : "keep-last:" + std::to_string(c.history_depth), "no history QoS");
  if (!c.durability.empty() && !d.durability) return no("durability", c.durability, "no durability QoS");
  if (c.instances > 0 && !d.keyed) return no("instances", std::to_string(c.instances), "no keyed topics");
  if (c.async && !d.async) return no("async", "", "no asynchronous publishing");
  if (c.batch && !d.batch) return no("batch", "", "no write batching");
  if (!c.congestion.empty() && !d.congestion) return no("congestion", c.congestion, "no congestion control to choose");
  if (!c.receive.empty() && !listed(d.receives, c.receive))
    return no("receive", c.receive, std::string("choose from: ") + (*d.receives ? d.receives : "none"));
  if (!c.transport.empty() && !listed(d.transports, c.transport))
    return no("transport", c.transport, std::string("choose from: ") + d.transports);
  if (o.wait == WaitMode::spin && !d.spin) return no("wait", "spin", "it cannot be polled");
  if (d.max_subscribers != 0 && o.subscribers > d.max_subscribers)
    return no("subscribers", std::to_string(o.subscribers),
              "a publisher serves at most " + std::to_string(d.max_subscribers) + " subscriber(s)");
  if (o.readers > 1 && d.max_readers_per_process != 0 && o.readers > d.max_readers_per_process)
    return no("readers", std::to_string(o.readers),
              "at most " + std::to_string(d.max_readers_per_process) + " reader(s) per process" +
                  (*d.readers_note ? std::string(": ") + d.readers_note : std::string()));
  if (o.readers > 1 && d.max_subscribers != 0 && o.readers > d.max_subscribers)
    return no("readers", std::to_string(o.readers),
              "a publisher serves at most " + std::to_string(d.max_subscribers) + " subscriber(s)");
  const std::string receive = c.receive.empty() ? d.receive : c.receive;
  if (o.wait == WaitMode::spin && receive == "listener")
    return "--wait spin: not with --receive listener (the middleware's own thread delivers; choose another receive)";
  return "";
}

std::string adapter_event(const std::string& name, const std::string& version, const Description& d,
                          const std::string& dir) {
  JsonObject q;
  q.boolean("history", d.history).boolean("durability", d.durability).boolean("keyed", d.keyed);
  q.boolean("async", d.async).boolean("batch", d.batch).boolean("congestion", d.congestion);
  JsonObject j;
  j.str("event", "adapter").str("name", name).str("version", version).unum("max_size", d.max_size);
  j.str("max_size_note", d.size_note);
  j.raw("transports", json_list(d.transports)).str("transport", d.transport);
  j.raw("reliabilities", json_list(d.reliabilities)).str("reliability", d.reliability);
  j.raw("qos", q.done());
  j.raw("receives", json_list(d.receives)).str("receive", d.receive);
  j.raw("waits", json_list(d.spin ? "block,spin" : "block"));
  j.str("hosts", d.multi_host ? "any" : "one").unum("max_subscribers", d.max_subscribers);
  j.unum("max_readers_per_process", d.max_readers_per_process).str("readers_note", d.readers_note);
  if (*d.service) j.str("service", d.service); else j.null("service");
  if (*d.service_config) j.str("service_config", dir + d.service_config); else j.null("service_config");
  j.boolean("writable_data", d.writable_data).boolean("concurrent_recv", d.concurrent_recv);
  j.str("notes", d.notes);
  if (*d.license) j.str("license", d.license);
  return j.done();
}

std::string agent_event(const std::string& missing) {
  JsonObject limits;
  limits.unum("min_size", kHeaderSize).real("max_rate_hz", kMaxRateHz).num("max_duration_ns", kMaxDurationNs);
  limits.num("max_history_depth", kMaxHistoryDepth).unum("max_instances", kMaxInstances);
  limits.unum("max_samples_file", 1u << 24).unum("max_readers", kMaxReaders);
  std::string gone = "[";
  size_t start = 0;
  while (start < missing.size()) {
    size_t end = missing.find(';', start);
    if (end == std::string::npos) end = missing.size();
    const std::string item = missing.substr(start, end - start);
    const size_t colon = item.find(':');
    if (!item.empty() && colon != std::string::npos) {
      const size_t text = item.find_first_not_of(' ', colon + 1);
      gone += std::string(gone.size() > 1 ? "," : "") +
              JsonObject().str("name", item.substr(0, colon)).str("reason", text == std::string::npos ? "" : item.substr(text)).done();
    }
    start = end + 1;
  }
  gone += "]";
  JsonObject j;
  j.str("event", "agent").str("version", MWPERF_VERSION).str("build_type", MWPERF_BUILD_TYPE);
  j.unum("header_size", kHeaderSize);
  j.raw("modes", json_list(kModes)).raw("waits", json_list(kWaits)).raw("clocks", json_list(kClocks));
  j.raw("reliabilities", json_list(kReliabilities)).raw("durabilities", json_list(kDurabilities));
  j.raw("congestions", json_list(kCongestions));
  j.raw("limits", limits.done()).real("histogram_relative_error", LatencyStats::kRelativeError);
  j.raw("missing", gone);
  return j.done();
}

}  // namespace mwperf
