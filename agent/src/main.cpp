// mwperf-agent: parse -> check against the adapter's description -> build the
// side -> open the middleware -> wait for the peer -> measure -> report.
// See docs/agent-protocol.md for the command line and the control protocol.
#include <pthread.h>
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

#include "adapters/registry.h"
#include "core/description.h"
#include "core/floor.h"
#include "core/options.h"
#include "core/session.h"
#include "util/clock.h"
#include "util/json.h"
#include "util/sysinfo.h"

using namespace mwperf;

namespace {

// A companion agent's path: next to this executable.
std::string companion_path(const char* file) {
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  std::string dir = n > 0 ? std::string(self, size_t(n)) : std::string(".");
  dir = dir.substr(0, dir.rfind('/') + 1);
  return dir + file;
}

int list_adapters() {
  std::string missing = missing_adapters();
  std::vector<std::string> lines;
  for (const AdapterEntry* e = adapters_begin(); e != adapters_end(); ++e) {
    if (e->make != nullptr) {
      auto a = e->make();
      lines.push_back(adapter_event(e->name, a->version(), a->description(), companion_path("")));
      continue;
    }
    // In a companion agent: its own description of the adapter.
    const std::string path = companion_path(e->companion);
    std::string found, said;  // its description, or its last words (e.g. rcl refusing an rmw)
    if (FILE* p = popen(("'" + path + "' list 2>&1").c_str(), "r")) {
      char buf[8192];
      const std::string want = std::string("\"event\":\"adapter\",\"name\":\"") + e->name + "\"";
      while (std::fgets(buf, sizeof buf, p)) {
        const std::string line = std::string(buf).substr(0, std::strcspn(buf, "\n"));
        if (line.find(want) != std::string::npos) found = line;
        else if (line.find_first_not_of(" \t") != std::string::npos && line[0] != '{') said = line;
      }
      pclose(p);
    }
    for (char& c : said)
      if (c == ';') c = ',';  // the list's separator
    if (found.empty()) {
      missing += std::string(missing.empty() ? "" : ";") + e->name + ": its agent " + path + " does not answer" +
                 (said.empty() ? "" : ": " + said);
    } else {
      lines.push_back(found);
    }
  }
  emit(agent_event(missing));
  emit(options_event());
  for (const std::string& line : lines) emit(line);
  return 0;
}

// What killed agents of the built-in adapters left, removed where stale: one
// {"event":"cleaned","mw":NAME,"removed":[...]} line per adapter.
int clean_stale() {
  for (const AdapterEntry* e = adapters_begin(); e != adapters_end(); ++e)
    if (e->make != nullptr)
      emit(JsonObject().str("event", "cleaned").str("mw", e->name).strs("removed", e->make()->clean_stale()).done());
  return 0;
}

int fail(const Options& o, const std::string& message, int code) {
  emit(error_event(o, message));
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
  const std::vector<Options> ro = reader_options(o);
  const size_t n = ro.size();
  auto where = [n](size_t i) { return n > 1 ? "reader " + std::to_string(i) + ": " : std::string(); };
  std::vector<std::unique_ptr<Adapter>> ads;
  for (size_t i = 0; i < n; ++i) ads.push_back(make_adapter(o.mw));
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
    stop.start_stdin_reader(true);
    std::vector<int> ports;
    for (const auto& a : ads) ports.push_back(a->bound_port());
    emit(JsonObject().str("event", "ready").str("role", role).str("mw", o.mw).num("port", ports[0])
             .ints("ports", ports).unum("readers", n).num("pid", getpid()).ints("cpu_affinity", current_affinity())
             .done());
  }
  const int64_t match_deadline = now_ns() + o.match_timeout_ns;  // the readers are matched side by side
  for (size_t i = 0; i < n; ++i) {
    const Errc m = ads[i]->wait_matched(std::max<int64_t>(match_deadline - now_ns(), 0));
    if (m != Errc::ok) return fail(o, where(i) + ads[i]->last_error(), m == Errc::timeout ? 4 : 3);
  }
  const int64_t discovery = now_ns() - t_start;
  if (o.role == Role::sub) {
    for (size_t i = 0; i < n; ++i)
      if (const std::string e = sides[i]->arm(); !e.empty()) return fail(o, where(i) + e, 3);
    emit(JsonObject().str("event", "matched").str("role", role).unum("readers", n).done());
  } else {
    emit(JsonObject().str("event", "ready").str("role", role).str("mw", o.mw).num("pid", getpid())
             .ints("cpu_affinity", current_affinity()).num("discovery_ns", discovery).done());
    stop.start_stdin_reader(false);
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
  int code = 0;
  for (const Outcome& out : outs) {
    emit(out.line);
    code = std::max(code, out.exit_code);
  }
  if (o.role == Role::pub) stop.wait_closed(kCloseWaitNs);  // every subscriber drained (session.h)
  for (auto& a : ads) a->close();
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::string err = parse_options(argc, argv, &o);
  if (err.empty() && o.command == "run") {
    const AdapterEntry* e = find_adapter(o.mw);
    if (e != nullptr && e->make == nullptr) {  // the companion agent runs this adapter
      const std::string path = companion_path(e->companion);
      argv[0] = const_cast<char*>(path.c_str());
      execv(path.c_str(), argv);
      std::fprintf(stderr, "mwperf-agent: --mw %s: cannot run %s: %s\n", o.mw.c_str(), path.c_str(), std::strerror(errno));
      return 3;
    }
    auto ad = make_adapter(o.mw);
    if (ad) settle(&o, ad->description());
    err = ad ? refuse(o.mw, ad->description(), o)
             : "--mw: '" + o.mw + "' is not an adapter built into this agent (see: mwperf-agent list)";
  }
  if (!err.empty()) {
    std::fprintf(stderr, "mwperf-agent: %s\n", err.c_str());
    return 2;
  }
  pthread_setname_np(pthread_self(), "mwperf-main");  // told apart from the middleware's threads
  prctl(PR_SET_PDEATHSIG, SIGTERM);  // never outlive the controller
  prctl(PR_SET_TIMERSLACK, 1UL);     // deadlines to the nanosecond, not the default 50 us slack
  signal(SIGPIPE, SIG_IGN);
  if (o.command == "version") {
    emit(JsonObject().str("event", "version").str("version", MWPERF_VERSION).str("build_type", MWPERF_BUILD_TYPE)
             .str("compiler", __VERSION__).done());
    return 0;
  }
  if (o.command == "list") return list_adapters();
  if (o.command == "cleanup") return clean_stale();
  if (o.command == "wakeup") return run_wakeup_probe(o);
  if (o.command == "floor") return run_floor(o.floor);  // core/floor.h
  if (o.command == "clock") return run_clock_probe();
  return run(o);
}
