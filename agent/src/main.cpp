// mwperf-agent: parse -> check against the adapter's description -> build the
// side -> open the middleware -> wait for the peer -> measure -> report.
// See docs/agent-protocol.md for the command line and the control protocol.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>

#include "adapters/registry.h"
#include "core/description.h"
#include "core/options.h"
#include "core/session.h"
#include "util/clock.h"
#include "util/json.h"
#include "util/sysinfo.h"

using namespace mwperf;

namespace {

int list_adapters() {
  emit(agent_event(missing_adapters()));
  for (const AdapterEntry* e = adapters_begin(); e != adapters_end(); ++e) {
    auto a = e->make();
    emit(adapter_event(e->name, a->version(), a->description()));
  }
  return 0;
}

int fail(const Options& o, const std::string& message, int code) {
  emit(error_event(o, message));
  return code;
}

int run(const Options& o) {
  const std::string pin_error = pin_to_cpu(o.cpu);
  if (!pin_error.empty()) return fail(o, pin_error, 3);
  const int64_t t_start = now_ns();  // discovery time runs from here to matched
  auto ad = make_adapter(o.mw);
  StopSignal stop;
  // The core's side first: its buffers are allocated and touched before the
  // middleware exists, so that they never count as the middleware's memory.
  auto side = o.role == Role::pub ? make_publisher(o, *ad, stop) : make_subscriber(o, *ad, stop);
  const Footprint footprint{long(side->own_bytes() / 1024), status_kb("VmRSS")};

  AdapterConfig cfg = o.qos;
  cfg.role = o.role;
  cfg.run_id = o.run_id;
  cfg.host = o.host;
  cfg.port = o.port;
  cfg.size = o.size;
  cfg.wait = o.wait;
  if (ad->open(cfg) != Errc::ok) return fail(o, ad->last_error(), 3);
  const char* role = o.role == Role::pub ? "pub" : "sub";
  if (o.role == Role::sub) {
    stop.start_stdin_reader(true);
    emit(JsonObject().str("event", "ready").str("role", role).str("mw", o.mw).num("port", ad->bound_port())
             .num("pid", getpid()).ints("cpu_affinity", current_affinity()).done());
  }
  const Errc m = ad->wait_matched(o.match_timeout_ns);
  if (m != Errc::ok) return fail(o, ad->last_error(), m == Errc::timeout ? 4 : 3);
  const int64_t discovery = now_ns() - t_start;
  if (o.role == Role::pub) {
    emit(JsonObject().str("event", "ready").str("role", role).str("mw", o.mw).num("pid", getpid())
             .ints("cpu_affinity", current_affinity()).num("discovery_ns", discovery).done());
    stop.start_stdin_reader(false);
  }
  const Outcome out = side->run(discovery, footprint);
  emit(out.line);
  ad->close();
  return out.exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::string err = parse_options(argc, argv, &o);
  if (err.empty() && o.command == "run") {
    auto ad = make_adapter(o.mw);
    err = ad ? refuse(o.mw, ad->description(), o)
             : "--mw: '" + o.mw + "' is not an adapter built into this agent (see: mwperf-agent list)";
  }
  if (!err.empty()) {
    std::fprintf(stderr, "mwperf-agent: %s\n", err.c_str());
    return 2;
  }
  prctl(PR_SET_PDEATHSIG, SIGTERM);  // never outlive the controller
  prctl(PR_SET_TIMERSLACK, 1UL);     // deadlines to the nanosecond, not the default 50 us slack
  signal(SIGPIPE, SIG_IGN);
  if (o.command == "version") {
    emit(JsonObject().str("event", "version").str("version", MWPERF_VERSION).str("build_type", MWPERF_BUILD_TYPE)
             .str("compiler", __VERSION__).done());
    return 0;
  }
  if (o.command == "list") return list_adapters();
  if (o.command == "wakeup") return run_wakeup_probe(o);
  if (o.command == "clock") return run_clock_probe();
  return run(o);
}
