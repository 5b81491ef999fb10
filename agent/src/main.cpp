// mwperf-agent: parse -> check against the adapter's description -> build the
// side -> open the middleware -> wait for the peer -> measure -> report.
// See docs/agent-protocol.md for the command line and the control protocol.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "core/description.h"
#include "core/floor.h"
#include "core/options.h"
#include "core/pair.h"
#include "core/session.h"
#include "plugins/plugins.h"
#include "plugins/registry.h"
#include "util/clock.h"
#include "util/json.h"
#include "util/own_threads.h"
#include "util/sysinfo.h"

using namespace mwperf;

namespace {

// Every adapter described, each in a child process (plugins.h): one whose
// plugin cannot be loaded is missing, with the reason.
int list_adapters() {
  std::string missing = missing_adapters();
  std::vector<std::string> lines;
  for (const AdapterEntry* e = adapters_begin(); e != adapters_end(); ++e) {
    std::string why;
    const std::string line = in_child(
        [e] {
          std::string reason;
          auto a = make_adapter(e->name, &reason);
          return a ? adapter_event(e->name, a->version(), a->description(), agent_dir()) : "!" + reason;
        },
        &why);
    if (!line.empty() && line[0] != '!') {
      lines.push_back(line);
      continue;
    }
    std::string said = line.empty() ? why : line.substr(1);
    for (char& c : said)
      if (c == ';') c = ',';  // the list's separator
    missing += std::string(missing.empty() ? "" : ";") + e->name + ": " + said;
  }
  emit(agent_event(missing));
  emit(options_event());
  for (const std::string& line : lines) emit(line);
  return 0;
}

// What killed agents of the adapters left, removed where stale: one
// {"event":"cleaned","mw":NAME,"removed":[...]} line per adapter whose entry
// has a clean (registry.h). No plugin is loaded: a middleware's libraries
// make files of their own when loaded (ROS 2's LTTng-UST wait segments).
int clean_stale() {
  for (const AdapterEntry* e = adapters_begin(); e != adapters_end(); ++e)
    if (e->clean != nullptr)
      emit(JsonObject().str("event", "cleaned").str("mw", e->name).strs("removed", e->clean()).done());
  return 0;
}

int fail(const Options& o, const std::string& message, int code) {
  emit(error_event(o, message));
  return code;
}

// An agent pair (--reuse): the next point's sessions and their options, on
// the adapters the last point's had (those sessions are gone first, before
// the options they refer to: no delivery reaches them any more).
void next_sides(const Options& point, std::vector<Options>* readers, std::vector<std::unique_ptr<Adapter>>& ads,
                StopSignal& stop, std::vector<std::unique_ptr<Session>>* sides, std::vector<Footprint>* footprints) {
  for (auto& a : ads) static_cast<PairAdapter&>(*a).detach();
  sides->clear();
  *readers = reader_options(point);
  const std::vector<Options>& ro = *readers;
  for (size_t i = 0; i < ro.size(); ++i) {
    sides->push_back(ro[i].role == Role::pub ? make_publisher(ro[i], *ads[i], stop)
                                             : make_subscriber(ro[i], *ads[i], stop));
    (*footprints)[i].own_kb = long((*sides)[i]->own_bytes() / 1024);
  }
}

// One participant of a discovery point (core/discovery.h).
int discover(Options o) {
  std::string why;
  auto ad = make_adapter(o.mw, &why);
  std::vector<std::unique_ptr<DiscoveryParticipant>> ps;
  for (uint32_t k = 0; ad && k < o.discovery.hosted; ++k) ps.push_back(ad->make_participant());
  if (ps.empty() || ps[0] == nullptr) {
    std::fprintf(stderr, "mwperf-agent: --mw: '%s' %s\n", o.mw.c_str(),
                 ad ? ("has no discovery mode: " + std::string(ad->description().discovery_note)).c_str()
                    : ("cannot be loaded: " + why).c_str());
    return 2;
  }
  const DiscoveryOptions& d = o.discovery;
  if (uint64_t(d.index) + uint64_t(d.hosted - 1) * d.stride >= d.participants) {
    std::fprintf(stderr,
                 "mwperf-agent: --index: '%u' (and --hosted %u every --stride %u) must be below "
                 "--participants %u\n",
                 d.index, d.hosted, d.stride, d.participants);
    return 2;
  }
  if (d.hosted > 1 && !d.threads) {
    std::fprintf(stderr, "mwperf-agent: --hosted: '%u' participants in one process need --participants-as threads\n",
                 d.hosted);
    return 2;
  }
  o.discovery.run_id = o.run_id;
  const int code = run_discovery(o.discovery, ps, o.mw.c_str());
  ps.clear();  // before the plugin's adapter
  return code;
}

int run(Options o) {
  if (o.key_from_stdin) {  // first: nothing is sent or accepted before the run's key is known
    const std::string e = read_run_key(&o.key);
    if (!e.empty()) return fail(o, e, 3);
  }
  const std::string pin_error = pin_to_cpu(o.cpu);  // the readers' threads inherit it
  if (!pin_error.empty()) return fail(o, pin_error, 3);
  const int64_t t_start = now_ns();  // discovery time runs from here to matched
  const bool pair = o.reuse > 0;
  std::vector<Options> ro = reader_options(o);
  const size_t n = ro.size();
  auto where = [n](size_t i) { return n > 1 ? "reader " + std::to_string(i) + ": " : std::string(); };
  std::vector<std::unique_ptr<Adapter>> ads;
  for (size_t i = 0; i < n; ++i)
    ads.push_back(pair ? std::make_unique<PairAdapter>(make_adapter(o.mw)) : make_adapter(o.mw));
  // Shared: one stop wakes every reader. Never freed: its control thread is
  // detached (it may sit in a read of stdin, or between two wake-ups, while
  // the process exits and the middleware's exit handlers run).
  StopSignal& stop = *new StopSignal;
  // The core's side first: its buffers are allocated and touched before the
  // middleware exists, so that they never count as the middleware's memory.
  std::vector<std::unique_ptr<Session>> sides;
  for (size_t i = 0; i < n; ++i)
    sides.push_back(o.role == Role::pub ? make_publisher(ro[i], *ads[i], stop) : make_subscriber(ro[i], *ads[i], stop));
  const long rss_before_open = status_kb("VmRSS");
  std::vector<Footprint> footprints;
  for (size_t i = 0; i < n; ++i) footprints.push_back({long(sides[i]->own_bytes() / 1024), rss_before_open});

  for (size_t i = 0; i < n; ++i)
    if (ads[i]->open(adapter_config(ro[i])) != Errc::ok) return fail(o, where(i) + ads[i]->last_error(), 3);
  const char* role = o.role == Role::pub ? "pub" : "sub";
  if (o.role == Role::sub) {
    stop.start_stdin_reader(true, pair);
    std::vector<int> ports;
    for (const auto& a : ads) ports.push_back(a->bound_port());
    emit(JsonObject()
             .str("event", "ready")
             .str("role", role)
             .str("mw", o.mw)
             .num("port", ports[0])
             .ints("ports", ports)
             .unum("readers", n)
             .num("pid", getpid())
             .ints("cpu_affinity", current_affinity())
             .done());
  }
  const int64_t match_deadline = now_ns() + o.match_timeout_ns;  // the readers are matched side by side
  for (size_t i = 0; i < n; ++i) {
    const Errc m = ads[i]->wait_matched(std::max<int64_t>(match_deadline - now_ns(), 0));
    if (m != Errc::ok) return fail(o, where(i) + ads[i]->last_error(), m == Errc::timeout ? 4 : 3);
  }
  const int64_t discovery = now_ns() - t_start;
  int code = 0;
  // One point, or (an agent pair) one after another until `close`: the
  // pair's discovery is the first point's; point i > 0 says its number.
  for (Options point = o;;) {
    if (o.role == Role::sub) {
      for (size_t i = 0; i < n; ++i)
        if (const std::string e = sides[i]->arm(); !e.empty()) return fail(o, where(i) + e, 3);
      JsonObject matched;
      matched.str("event", "matched").str("role", role).unum("readers", n);
      if (pair) matched.unum("pair_point", point.pair_point);
      emit(matched.done());
    } else {
      JsonObject ready;
      ready.str("event", "ready")
          .str("role", role)
          .str("mw", o.mw)
          .num("pid", getpid())
          .ints("cpu_affinity", current_affinity())
          .num("discovery_ns", discovery);
      if (pair) ready.unum("pair_point", point.pair_point);
      emit(ready.done());
      if (point.pair_point == 0) stop.start_stdin_reader(false, pair);
      // The start barrier: nothing is sent before every subscriber is matched
      // and receiving (the controller's `go`), so no first sample is lost to a
      // reader that is not listening yet, or to an echo writer not yet matched.
      if (!stop.wait_go(o.match_timeout_ns)) {
        char within[32];
        std::snprintf(within, sizeof within, "%.1f s", double(o.match_timeout_ns) / 1e9);
        return fail(o, std::string("no 'go' from the controller within ") + within + " of being matched", 4);
      }
    }
    const std::vector<Outcome> outs = run_sessions(sides, discovery, footprints);
    for (const Outcome& out : outs) {
      emit(out.line);
      code = std::max(code, out.exit_code);
    }
    std::string args;
    if (!pair || code != 0 || !stop.wait_next(&args)) break;  // a failed point ends the pair
    if (const std::string e = parse_next(o, args, point.pair_point + 1, &point); !e.empty()) {
      emit(error_event(o, e));
      code = 2;
      break;
    }
    next_sides(point, &ro, ads, stop, &sides, &footprints);
  }
  if (o.role == Role::pub) stop.wait_closed(kSettleNs);  // or until every subscriber has its result (session.h)
  if (pair)
    for (auto& a : ads) static_cast<PairAdapter&>(*a).detach();
  for (auto& a : ads) a->close();
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::string err = parse_options(argc, argv, &o);
  if (err.empty() && o.command == "run") {
    std::string why;
    auto ad = make_adapter(o.mw, &why);
    if (ad) settle(&o, ad->description());
    err = ad ? refuse(o.mw, ad->description(), o)
          : find_adapter(o.mw) == nullptr
              ? "--mw: '" + o.mw + "' is not an adapter built into this agent (see: mwperf-agent list)"
              : "--mw: '" + o.mw + "' cannot be loaded here: " + why;
    if (err.empty()) err = check_enclave(o);
  }
  if (!err.empty()) {
    std::fprintf(stderr, "mwperf-agent: %s\n", err.c_str());
    return 2;
  }
  const OwnThread me("mwperf-main");  // its id tells it apart from the middleware's threads
  prctl(PR_SET_PDEATHSIG, SIGTERM);   // never outlive the controller
  prctl(PR_SET_TIMERSLACK, 1UL);      // deadlines to the nanosecond, not the default 50 us slack
  signal(SIGPIPE, SIG_IGN);
  if (o.command == "version") {
    emit(JsonObject()
             .str("event", "version")
             .str("version", MWPERF_VERSION)
             .str("build_type", MWPERF_BUILD_TYPE)
             .str("compiler", __VERSION__)
             .done());
    return 0;
  }
  if (o.command == "list") return list_adapters();
  if (o.command == "cleanup") return clean_stale();
  if (o.command == "wakeup") return run_wakeup_probe(o);
  if (o.command == "floor") return run_floor(o.floor);  // core/floor.h
  if (o.command == "discover") return discover(o);
  if (o.command == "clock") return run_clock_probe();
  return run(o);
}
