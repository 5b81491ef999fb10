#include "core/discovery.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "util/clock.h"
#include "util/json.h"
#include "util/sysinfo.h"

namespace mwperf {
namespace {

// How often the core reads the matched counts and takes the samples: the
// times' resolution, and little CPU next to the middleware's own.
constexpr int64_t kPollNs = 2'000'000;

// The next line on stdin without its newline; false at EOF.
bool read_line(std::string* line) {
  char buf[256];
  if (std::fgets(buf, sizeof buf, stdin) == nullptr) return false;
  *line = buf;
  while (!line->empty() && (line->back() == '\n' || line->back() == '\r')) line->pop_back();
  return true;
}

struct Seen {
  uint32_t participants, self;
  std::vector<uint8_t> from;  // [topic * N + participant]: a sample of it arrived
  uint64_t count = 0;         // distinct (topic, other participant) seen
  uint64_t foreign = 0;       // samples naming no participant of the run
  static void mark(void* ctx, uint32_t topic, uint32_t from) {
    auto* s = static_cast<Seen*>(ctx);
    const size_t at = size_t(topic) * s->participants + from;
    if (from >= s->participants || at >= s->from.size()) {
      ++s->foreign;
      return;
    }
    if (from == s->self || s->from[at]) return;
    s->from[at] = 1;
    ++s->count;
  }
};

int64_t cpu_ns() {
  const Usage u = usage_now();
  return u.user_ns + u.sys_ns;
}

}  // namespace

// One hosted participant's progress.
struct Hosted {
  DiscoveryOptions o;
  Seen seen;
  int64_t opened = -1, matched_at = -1, sampled_at = -1;
  uint64_t matched = 0;
  Errc opened_as = Errc::ok;
  bool done() const { return matched_at >= 0 && sampled_at >= 0; }
};

int run_discovery(const DiscoveryOptions& o, const std::vector<std::unique_ptr<DiscoveryParticipant>>& ps,
                  const char* mw) {
  emit(JsonObject()
           .str("event", "ready")
           .str("role", "participant")
           .str("mw", mw)
           .unum("index", o.index)
           .unum("hosted", ps.size())
           .num("pid", getpid())
           .done());
  std::string line;
  while (read_line(&line) && line != "go") {
  }
  const int64_t go = now_ns();
  const int64_t cpu_go = cpu_ns();
  const long rss_go = status_kb("VmRSS");
  std::vector<Hosted> hs;
  hs.reserve(ps.size());
  for (uint32_t k = 0; k < ps.size(); ++k) {
    DiscoveryOptions ok = o;
    ok.index = o.index + k * o.stride;
    hs.push_back(Hosted{ok, Seen{o.participants, ok.index, std::vector<uint8_t>(size_t(o.topics) * o.participants)}});
  }
  {  // every participant opened at once, as N processes would be: a thread each
    std::vector<std::thread> openers;
    for (size_t k = 0; k < ps.size(); ++k)
      openers.emplace_back([&, k] {
        hs[k].opened_as = ps[k]->open(hs[k].o);
        hs[k].opened = now_ns() - go;
      });
    for (auto& t : openers) t.join();
  }
  for (size_t k = 0; k < ps.size(); ++k) {
    if (hs[k].opened_as == Errc::ok) continue;
    emit(JsonObject()
             .str("event", "error")
             .str("role", "participant")
             .str("mw", mw)
             .str("error", ps[k]->last_error())
             .done());
    for (auto& p : ps) p->close();
    return 3;
  }
  const uint64_t want_matched = uint64_t(o.topics) * o.participants;
  const uint64_t want_seen = uint64_t(o.topics) * (o.participants - 1);
  for (const int64_t end = go + o.timeout_ns;;) {
    bool all = true;
    for (size_t k = 0; k < ps.size(); ++k) {
      Hosted& h = hs[k];
      if (h.done()) continue;
      h.matched = ps[k]->matched();
      ps[k]->take(&Seen::mark, &h.seen);
      const int64_t t = now_ns();
      if (h.matched_at < 0 && h.matched >= want_matched) h.matched_at = t;
      if (h.sampled_at < 0 && h.seen.count >= want_seen) h.sampled_at = t;
      all = all && h.done();
    }
    if (all || now_ns() >= end) break;
    std::this_thread::sleep_for(std::chrono::nanoseconds(kPollNs));
  }
  const int64_t n = int64_t(ps.size());
  const int64_t cpu = (cpu_ns() - cpu_go) / n;
  const long rss = status_kb("VmRSS");
  bool complete = true;
  for (size_t k = 0; k < ps.size(); ++k) {
    const Hosted& h = hs[k];
    complete = complete && h.done();
    JsonObject j;
    j.str("event", "discovered").str("mw", mw).unum("index", h.o.index).boolean("complete", h.done());
    j.num("go_ns", go).num("open_ns", h.opened);
    j.num("matched_ns", h.matched_at < 0 ? -1 : h.matched_at - go)
        .num("first_sample_ns", h.sampled_at < 0 ? -1 : h.sampled_at - go);
    j.unum("matched_writers", h.matched).unum("matched_wanted", want_matched);
    j.unum("samples_from", h.seen.count).unum("samples_wanted", want_seen).unum("foreign", h.seen.foreign);
    // One process's CPU and RSS, shared out evenly among the participants it hosts.
    j.num("cpu_ns", cpu).num("rss_kb", rss / n).num("rss_growth_kb", (rss - rss_go) / n).unum("hosted", n);
    j.num("poll_ns", kPollNs).str("version", ps[k]->version()).raw("config", ps[k]->config_json());
    emit(j.done());
  }
  // The others may still need these participants: they stay until told.
  while (read_line(&line) && line != "stop") {
  }
  for (auto& p : ps) p->close();
  return complete ? 0 : 4;
}

}  // namespace mwperf
