// mwperf-agent: parse -> validate -> open the adapter -> run one role -> report.
// See docs/agent-protocol.md for the command line and the control protocol.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>

#include "core/clock.h"
#include "core/json.h"
#include "core/options.h"
#include "core/session.h"
#include "core/sysinfo.h"

using namespace mwperf;

namespace mwperf {

long g_rss_before_open_kb = 0;  // RSS before the middleware is opened: its own memory is the rest

void common_fields(JsonObject& j, const Options& o, const Adapter& ad) {
  j.str("role", o.role == Role::pub ? "pub" : "sub").str("mw", o.mw).str("mode", to_string(o.mode));
  j.unum("size", o.size).str("wait", o.wait == WaitMode::spin ? "spin" : "block").str("clock", "monotonic");
  j.ints("cpu_affinity", current_affinity()).num("pid", getpid());
  j.str("adapter_version", ad.version()).raw("adapter_config", ad.effective_config());
  j.str("transport", ad.transport_in_use()).str("reliability", ad.reliability_in_use());
  j.num("rss_before_open_kb", g_rss_before_open_kb);
}

std::string error_event(const Options& o, const std::string& message) {
  return JsonObject()
      .str("event", "error")
      .str("role", o.role == Role::pub ? "pub" : "sub")
      .str("mw", o.mw)
      .str("error", message)
      .done();
}

}  // namespace mwperf

namespace {

std::string supports_json(const Capabilities& c) {
  JsonObject j;
  j.boolean("reliable", c.reliable).boolean("best_effort", c.best_effort).boolean("history", c.history);
  j.boolean("durability", c.durability).boolean("keyed", c.keyed).boolean("async", c.async).boolean("batching", c.batching);
  j.boolean("listener", c.listener).boolean("waitset", c.waitset).str("transports", c.transports);
  return j.done();
}

int list_adapters() {
  for (const AdapterEntry* e = adapters_begin(); e != adapters_end(); ++e) {
    auto a = e->make();
    const Capabilities c = a->caps();
    emit(JsonObject()
             .str("event", "adapter")
             .str("name", e->name)
             .str("version", a->version())
             .unum("max_size", c.max_size)
             .str("transport", c.transport)
             .str("reliability", c.reliability)
             .raw("supports", supports_json(c))
             .done());
  }
  return 0;
}

int run(const Options& o) {
  const std::string pin_error = pin_to_cpu(o.cpu);
  if (!pin_error.empty()) {
    emit(error_event(o, pin_error));
    return 3;
  }
  const int64_t t_start = now_ns();  // discovery time runs from here to matched
  g_rss_before_open_kb = status_kb("VmRSS");
  auto ad = make_adapter(o.mw);
  AdapterConfig cfg = o.qos;
  cfg.role = o.role;
  cfg.run_id = o.run_id;
  cfg.host = o.host;
  cfg.port = o.port;
  cfg.size = o.size;
  cfg.wait = o.wait;
  if (ad->open(cfg) != Errc::ok) {
    emit(error_event(o, ad->last_error()));
    return 3;
  }
  const char* role = o.role == Role::pub ? "pub" : "sub";
  Outcome out{0, ""};
  if (o.role == Role::sub) {
    StopSignal stop;
    stop.start_stdin_reader(true);
    emit(JsonObject()
             .str("event", "ready").str("role", role).str("mw", o.mw)
             .num("port", ad->bound_port()).num("pid", getpid())
             .ints("cpu_affinity", current_affinity()).done());
    const Errc m = ad->wait_matched(o.match_timeout_ns);
    if (m != Errc::ok) {
      emit(error_event(o, ad->last_error()));
      return m == Errc::timeout ? 4 : 3;
    }
    out = run_sub(o, *ad, stop);
  } else {
    const Errc m = ad->wait_matched(o.match_timeout_ns);
    if (m != Errc::ok) {
      emit(error_event(o, ad->last_error()));
      return m == Errc::timeout ? 4 : 3;
    }
    const int64_t discovery = now_ns() - t_start;
    emit(JsonObject()
             .str("event", "ready").str("role", role).str("mw", o.mw).num("pid", getpid())
             .ints("cpu_affinity", current_affinity()).num("discovery_ns", discovery).done());
    StopSignal stop;
    stop.start_stdin_reader(false);
    out = run_pub(o, *ad, discovery, stop);
  }
  emit(out.line);
  ad->close();
  return out.exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const std::string err = parse_options(argc, argv, &o);
  if (!err.empty()) {
    std::fprintf(stderr, "mwperf-agent: %s\n", err.c_str());
    return 2;
  }
  prctl(PR_SET_PDEATHSIG, SIGTERM);  // never outlive the controller
  prctl(PR_SET_TIMERSLACK, 1UL);     // deadlines to the nanosecond, not the default 50 us slack
  signal(SIGPIPE, SIG_IGN);
  if (o.command == "version") {
    emit(JsonObject()
             .str("event", "version").str("version", MWPERF_VERSION).str("build_type", MWPERF_BUILD_TYPE)
             .str("compiler", __VERSION__).done());
    return 0;
  }
  if (o.command == "list") return list_adapters();
  if (o.command == "wakeup") return run_wakeup_probe(o);
  if (o.command == "clock") {
    // Clock-offset exchange with the controller: one reading per line read.
    char line[64];
    while (std::fgets(line, sizeof line, stdin)) {
      timespec rt;
      clock_gettime(CLOCK_REALTIME, &rt);
      emit(JsonObject().str("event", "clock").num("mono_ns", now_ns())
               .num("real_ns", int64_t(rt.tv_sec) * 1000000000LL + rt.tv_nsec).done());
    }
    return 0;
  }
  return run(o);
}
