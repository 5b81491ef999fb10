#include "core/events.h"

#include <unistd.h>

#include <map>

#include "util/sysinfo.h"

namespace mwperf {

void common_fields(JsonObject& j, const Options& o, const Adapter& ad, const Footprint& f) {
  j.str("role", o.role == Role::pub ? "pub" : "sub").str("mw", o.mw).str("mode", to_string(o.mode));
  j.unum("size", o.size).str("wait", o.wait == WaitMode::spin ? "spin" : "block").str("clock", to_string(o.clock));
  j.ints("cpu_affinity", current_affinity()).num("pid", getpid());
  j.str("adapter_version", ad.version()).raw("adapter_config", ad.effective_config());
  j.raw("versions", ad.versions()).raw("data_path", ad.data_path());
  j.str("transport", ad.transport_in_use()).str("reliability", ad.reliability_in_use());
  j.str("receive", ad.receive_in_use());
  j.num("own_kb", f.own_kb).num("rss_before_open_kb", f.rss_before_open_kb);
}

std::string error_event(const Options& o, const std::string& message) {
  return JsonObject()
      .str("event", "error")
      .str("role", o.role == Role::pub ? "pub" : "sub")
      .str("mw", o.mw)
      .str("error", message)
      .done();
}

std::string stats_json(const Summary& s) {
  JsonObject o;
  o.unum("count", s.count);
  if (s.count == 0) {
    for (const char* f : {"mean", "std", "min", "max"}) o.null(f);
  } else {
    o.real("mean", s.mean).real("std", s.std).num("min", s.min).num("max", s.max);
  }
  const std::pair<const char*, const Pct*> pcts[] = {{"p50", &s.p50},   {"p90", &s.p90},     {"p99", &s.p99},
                                                     {"p999", &s.p999}, {"p9999", &s.p9999}, {"p999999", &s.p999999}};
  for (const auto& [name, p] : pcts) {
    if (p->ok)
      o.num(name, p->v);
    else
      o.null(name);
  }
  o.real("relative_error", LatencyStats::kRelativeError);
  auto ci = [](const Interval& i) {
    return i.valid ? "[" + std::to_string(i.lo) + "," + std::to_string(i.hi) + "]" : std::string("null");
  };
  const std::pair<const char*, const Interval*> cis[] = {
      {"p50_ci", &s.p50_ci}, {"p99_ci", &s.p99_ci}, {"p999_ci", &s.p999_ci}};
  JsonObject why;  // why an interval is null
  for (const auto& [name, i] : cis) {
    o.raw(name, ci(*i));
    if (!i->valid && i->why) why.str(name, i->why);
  }
  o.raw("ci_null", why.done()).str("ci_method", "woodruff-batch-means");
  o.real("ci_confidence", s.ci_confidence).unum("ci_batches", s.ci_batches);
  return o.done();
}

std::string convergence_json(const Convergence& c, int64_t divisor) {
  if (c.after_ns < 0) return "null";
  auto ci = [divisor](const Interval& i) {
    return i.valid ? "[" + std::to_string(i.lo / divisor) + "," + std::to_string(i.hi / divisor) + "]"
                   : std::string("null");
  };
  JsonObject o, why;
  o.num("after_ns", c.after_ns).unum("count", c.count).unum("batches", c.batches).unum("look", c.look);
  o.raw("p50_ci", ci(c.p50)).raw("p99_ci", ci(c.p99));
  if (c.flow) {  // the estimates, and their intervals where they have one
    for (const auto& [name, r] : {std::pair<const char*, const Range&>{"rate", c.rate}, {"loss", c.loss}}) {
      JsonObject v;
      v.real("est", r.est);
      if (r.valid)
        v.real("lo", r.lo).real("hi", r.hi);
      else
        v.null("lo").null("hi");
      o.raw(name, v.done());
    }
  }
  o.num("needed_ns", c.needed_ns);
  const std::pair<const char*, const char*> whys[] = {{"batches", c.why},
                                                      {"p50_ci", c.flow ? nullptr : c.p50.why},
                                                      {"p99_ci", c.flow ? nullptr : c.p99.why},
                                                      {"rate", c.flow ? c.rate.why : nullptr},
                                                      {"loss", c.flow ? c.loss.why : nullptr}};
  for (const auto& [name, reason] : whys)
    if (reason) why.str(name, reason);
  o.raw("why", why.done());
  return o.done();
}

}  // namespace mwperf

namespace mwperf {

std::string threads_json(const Usage& from, const Usage& to) {
  std::map<std::pair<int, int64_t>, int64_t> before;  // by (tid, start): a reused tid is another thread
  for (const ThreadTime& t : from.threads) before[{t.tid, t.start}] = t.cpu_ns;
  struct Group {
    int64_t cpu_ns = 0;
    int threads = 0;
  };
  std::map<std::pair<std::string, bool>, Group> groups;
  for (const ThreadTime& t : to.threads) {
    const auto it = before.find({t.tid, t.start});  // a thread started in the window counts from 0
    Group& g = groups[{t.name, t.own}];
    g.cpu_ns += t.cpu_ns - (it == before.end() ? 0 : it->second);
    ++g.threads;
  }
  std::string out = "[";
  for (const auto& [key, g] : groups) {
    out += std::string(out.size() > 1 ? "," : "") + JsonObject()
                                                        .str("name", key.first)
                                                        .num("cpu_ns", g.cpu_ns)
                                                        .num("threads", g.threads)
                                                        .boolean("own", key.second)
                                                        .done();
  }
  return out + "]";
}

}  // namespace mwperf
