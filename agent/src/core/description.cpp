#include "core/description.h"

#include "core/header.h"
#include "core/session.h"
#include "core/stats.h"
#include "util/json.h"

namespace mwperf {

const char* Description::capability(const std::string& name) const {
  if (name == "transport") return transports;
  if (name == "reliability") return reliabilities;
  if (name == "receive") return *receives ? receives : nullptr;
  if (name == "wait") return spin ? "block,spin" : "block";
  if (name == "security") return *securities ? securities : nullptr;
  if (name == "discovery") return *discoveries ? discoveries : nullptr;
  return listed(honours, name) ? "" : nullptr;
}

const char* Description::refusal_of(const std::string& name) const {
  if (name == "discovery") return *discoveries ? "" : discovery_note;
  return name == "security" && !*securities ? security_note : "";
}

const char* Description::default_of(const std::string& name) const {
  if (name == "transport") return transport;
  if (name == "reliability") return reliability;
  if (name == "receive") return receive;
  return "";
}

uint64_t Description::limit(const std::string& name) const {
  if (name == "max_size") return max_size;
  if (name == "max_subscribers") return max_subscribers;
  if (name == "max_readers_per_process") return max_readers_per_process;
  return 0;
}

const char* Description::limit_note(const std::string& name) const {
  if (name == "max_size") return size_note;
  return name == "max_readers_per_process" ? readers_note : "";
}

namespace {

std::string spaced(const char* list) {
  std::string out;
  for (const char* c = list; *c; ++c) out += *c == ',' ? std::string(", ") : std::string(1, *c);
  return out;
}

// The value of option `name` for this adapter: as given, else the adapter's
// default, else the option's.
std::string effective(const Options& o, const Description& d, const char* name) {
  if (const std::string* text = o.given_text(name)) return *text;
  const OptionRow* r = find_option(name);
  if (r != nullptr && *r->capability && *d.default_of(r->capability)) return d.default_of(r->capability);
  return r != nullptr && r->def != nullptr ? r->def : "";
}

std::string replace(std::string text, const std::string& what, const std::string& with) {
  const size_t at = text.find(what);
  return at == std::string::npos ? text : text.replace(at, what.size(), with);
}

}  // namespace

void settle(Options* o, const Description& d) {
  // A spinning side polls: with no --receive, an adapter whose default hands
  // data over on its own thread receives the first way that can be polled.
  if (o->wait != WaitMode::spin || o->given_text("receive") != nullptr || std::string(d.receive) != "listener") return;
  std::string all = d.receives;
  size_t start = 0;
  while (start < all.size()) {
    size_t end = all.find(',', start);
    if (end == std::string::npos) end = all.size();
    const std::string r = all.substr(start, end - start);
    if (r != "listener") {
      o->qos.receive = r;
      o->given.emplace_back(find_option("receive"), r);
      return;
    }
    start = end + 1;
  }
}

std::string refuse(const std::string& mw, const Description& d, const Options& o) {
  for (const auto& [row, text] : o.given) {
    if (!*row->capability || !asks(*row, text)) continue;
    const char* values = d.capability(row->capability);
    const std::string head = "--" + std::string(row->name) + " " + text + ": not supported by " + mw;
    const char* why = *d.refusal_of(row->capability) ? d.refusal_of(row->capability) : row->refusal;
    if (values == nullptr) return head + (*why ? std::string(" (") + why + ")" : std::string());
    if (*values && !listed(values, text)) return head + " (choose from: " + spaced(values) + ")";
  }
  for (const LimitRule& l : limit_rules()) {
    if (*l.when && effective(o, d, l.when) != l.is) continue;
    const uint64_t limit = d.limit(l.limit);
    const std::string text = effective(o, d, l.option);
    Value v;
    if (limit == 0 || !parse_value(*find_option(l.option), text, &v).empty() || v.u <= limit) continue;
    const std::string note = d.limit_note(l.limit);
    return "--" + std::string(l.option) + " " + text + ": " + mw + " " +
           replace(l.text, "{limit}", std::to_string(limit)) + (note.empty() ? "" : ": " + note);
  }
  for (const ConflictRule& c : conflict_rules())
    if (effective(o, d, c.option) == c.value && effective(o, d, c.other) == c.other_value)
      return "--" + std::string(c.option) + " " + c.value + ": " + c.text;
  return "";
}

std::string adapter_event(const std::string& name, const std::string& version, const Description& d,
                          const std::string& dir) {
  JsonObject caps, defaults, refusals;
  for (const OptionRow& r : option_rows()) {
    if (!*r.capability) continue;
    const char* values = d.capability(r.capability);
    if (values != nullptr) caps.raw(r.capability, json_list(values));
    if (*d.default_of(r.capability)) defaults.str(r.capability, d.default_of(r.capability));
    if (values == nullptr && *d.refusal_of(r.capability)) refusals.str(r.capability, d.refusal_of(r.capability));
  }
  JsonObject limits, notes;
  for (const char* l : {"max_size", "max_subscribers", "max_readers_per_process"}) {
    limits.unum(l, d.limit(l));
    if (*d.limit_note(l)) notes.str(l, d.limit_note(l));
  }
  JsonObject j;
  j.str("event", "adapter").str("name", name).str("version", version);
  j.raw("capabilities", caps.done()).raw("defaults", defaults.done()).raw("refusals", refusals.done());
  if (*d.securities) j.str("security", d.security_note);
  j.raw("limits", limits.done()).raw("limit_notes", notes.done());
  j.str("hosts", d.multi_host ? "any" : "one");
  if (*d.remote_transport)
    j.str("remote_transport", d.remote_transport);
  else
    j.null("remote_transport");
  j.raw("leftovers", json_list(d.leftovers));
  if (*d.service)
    j.str("service", d.service);
  else
    j.null("service");
  if (*d.service_config)
    j.str("service_config", dir + d.service_config);
  else
    j.null("service_config");
  j.boolean("writable_data", d.writable_data).boolean("concurrent_recv", d.concurrent_recv);
  j.str("notes", d.notes);
  if (*d.license) j.str("license", d.license);
  return j.done();
}

std::string agent_event(const std::string& missing) {
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
              JsonObject()
                  .str("name", item.substr(0, colon))
                  .str("reason", text == std::string::npos ? "" : item.substr(text))
                  .done();
    }
    start = end + 1;
  }
  gone += "]";
  JsonObject timing;  // what the controller's deadlines must allow for
  timing.num("linger_ns", kLingerNs).num("settle_ns", kSettleNs);
  timing.num("drain_reliable_ns", kDrainReliableNs).num("drain_best_effort_ns", kDrainBestEffortNs);
  JsonObject j;
  j.str("event", "agent").str("version", MWPERF_VERSION).str("build_type", MWPERF_BUILD_TYPE);
  j.unum("header_size", kHeaderSize).raw("timing", timing.done());
  j.real("histogram_relative_error", LatencyStats::kRelativeError);
  j.raw("missing", gone);
  return j.done();
}

}  // namespace mwperf
