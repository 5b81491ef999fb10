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

int run_discovery(const DiscoveryOptions& o, DiscoveryParticipant& p, const char* mw) {
  emit(JsonObject()
           .str("event", "ready")
           .str("role", "participant")
           .str("mw", mw)
           .unum("index", o.index)
           .num("pid", getpid())
           .done());
  std::string line;
  while (read_line(&line) && line != "go") {
  }
  const int64_t go = now_ns();
  const int64_t cpu_go = cpu_ns();
  const long rss_go = status_kb("VmRSS");
  if (p.open(o) != Errc::ok) {
    emit(JsonObject()
             .str("event", "error")
             .str("role", "participant")
             .str("mw", mw)
             .str("error", p.last_error())
             .done());
    p.close();
    return 3;
  }
  const int64_t opened = now_ns();
  const uint64_t want_matched = uint64_t(o.topics) * o.participants;
  const uint64_t want_seen = uint64_t(o.topics) * (o.participants - 1);
  Seen seen{o.participants, o.index, std::vector<uint8_t>(size_t(o.topics) * o.participants)};
  int64_t matched_at = -1, sampled_at = -1;
  uint64_t matched = 0;
  for (const int64_t end = go + o.timeout_ns;;) {
    matched = p.matched();
    p.take(&Seen::mark, &seen);
    const int64_t t = now_ns();
    if (matched_at < 0 && matched >= want_matched) matched_at = t;
    if (sampled_at < 0 && seen.count >= want_seen) sampled_at = t;
    if ((matched_at >= 0 && sampled_at >= 0) || t >= end) break;
    std::this_thread::sleep_for(std::chrono::nanoseconds(kPollNs));
  }
  const int64_t cpu = cpu_ns() - cpu_go;
  const bool complete = matched_at >= 0 && sampled_at >= 0;
  JsonObject j;
  j.str("event", "discovered").str("mw", mw).unum("index", o.index).boolean("complete", complete);
  j.num("go_ns", go).num("open_ns", opened - go);
  j.num("matched_ns", matched_at < 0 ? -1 : matched_at - go)
      .num("first_sample_ns", sampled_at < 0 ? -1 : sampled_at - go);
  j.unum("matched_writers", matched).unum("matched_wanted", want_matched);
  j.unum("samples_from", seen.count).unum("samples_wanted", want_seen).unum("foreign", seen.foreign);
  j.num("cpu_ns", cpu).num("rss_kb", status_kb("VmRSS")).num("rss_growth_kb", status_kb("VmRSS") - rss_go);
  j.num("poll_ns", kPollNs).str("version", p.version()).raw("config", p.config_json());
  emit(j.done());
  // The others may still need this participant: it stays until told.
  while (read_line(&line) && line != "stop") {
  }
  p.close();
  return complete ? 0 : 4;
}

}  // namespace mwperf
