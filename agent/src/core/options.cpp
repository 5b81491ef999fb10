#include "core/options.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>

#include "core/header.h"

namespace mwperf {

const char* to_string(StampClock c) { return c == StampClock::realtime ? "realtime" : "monotonic"; }

const char* to_string(Mode m) {
  switch (m) {
    case Mode::latency: return "latency";
    case Mode::throughput: return "throughput";
    case Mode::rate: return "rate";
    case Mode::burst: return "burst";
  }
  return "?";
}

namespace {

std::string bad(const std::string& opt, const std::string& val, const char* why) {
  return "--" + opt + ": '" + val + "' " + why;
}

bool to_u64(const std::string& s, uint64_t* out) {
  if (s.empty() || s[0] == '-' || s[0] == '+') return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

bool to_i64(const std::string& s, int64_t* out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

}  // namespace

std::string parse_options(int argc, const char* const* argv, Options* o) {
  // The run id comes from the environment (MWPERF_RUN_ID), where other users
  // cannot read it as they can a command line; --run-id still overrides.
  if (const char* env = std::getenv("MWPERF_RUN_ID")) {
    uint64_t id = 0;
    if (!to_u64(env, &id) || id > 0xFFFFFFFFULL) return std::string("MWPERF_RUN_ID=") + env + ": must be a 32-bit unsigned integer";
    o->run_id = uint32_t(id);
  }
  if (argc < 2) return "missing command (run, list, wakeup, version, clock, cleanup)";
  o->command = argv[1];
  if (o->command != "run" && o->command != "list" && o->command != "wakeup" && o->command != "version" &&
      o->command != "clock" && o->command != "cleanup")
    return "unknown command '" + o->command + "' (run, list, wakeup, version, clock, cleanup)";

  std::map<std::string, std::string> kv;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--", 0) != 0) return "unexpected argument '" + a + "'";
    if (i + 1 >= argc) return a + ": missing value";
    kv[a.substr(2)] = argv[++i];
  }

  for (const auto& [k, v] : kv) {
    uint64_t u = 0;
    int64_t i = 0;
    if (k == "role") {
      if (v == "pub") o->role = Role::pub;
      else if (v == "sub") o->role = Role::sub;
      else return bad(k, v, "is not pub or sub");
    } else if (k == "mw") {
      if (v.empty()) return bad(k, v, "must name an adapter (see: mwperf-agent list)");
      o->mw = v;
    } else if (k == "mode") {
      if (v == "latency") o->mode = Mode::latency;
      else if (v == "throughput") o->mode = Mode::throughput;
      else if (v == "rate") o->mode = Mode::rate;
      else if (v == "burst") o->mode = Mode::burst;
      else return bad(k, v, "is not latency, throughput, rate or burst");
    } else if (k == "size") {
      if (!to_u64(v, &u) || u < kHeaderSize)
        return bad(k, v, "must be an integer number of bytes >= 32 (the mwperf header)");
      o->size = size_t(u);
    } else if (k == "rate-hz") {
      char* end = nullptr;
      const double r = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !std::isfinite(r) || r <= 0 || r > kMaxRateHz)
        return bad(k, v, "must be a rate above 0 and at most 1e9 Hz");
      o->rate_hz = r;
    } else if (k == "duration-ns" || k == "warmup-ns" || k == "ping-timeout-ns" || k == "match-timeout-ns" ||
               k == "drain-ns") {
      if (!to_i64(v, &i) || i < 0 || i > kMaxDurationNs)
        return bad(k, v, "must be a non-negative integer of nanoseconds (at most 2^55)");
      if (k == "duration-ns") o->duration_ns = i;
      else if (k == "warmup-ns") o->warmup_ns = i;
      else if (k == "ping-timeout-ns") o->ping_timeout_ns = i;
      else if (k == "match-timeout-ns") o->match_timeout_ns = i;
      else o->drain_ns = i;
    } else if (k == "latency-count") {
      if (!to_u64(v, &u)) return bad(k, v, "must be a non-negative integer (0 = no latency pings)");
      o->latency_count = u;
    } else if (k == "demand") {
      if (!to_u64(v, &u) || u < 1 || u > 100000000) return bad(k, v, "must be a number of samples per burst, 1 or more");
      o->demand = u;
    } else if (k == "burst-gap-ns") {
      if (!to_i64(v, &i) || i < 0 || i > kMaxDurationNs) return bad(k, v, "must be a non-negative integer of nanoseconds");
      o->burst_gap_ns = i;
    } else if (k == "subscribers") {
      if (!to_u64(v, &u) || u < 1 || u > 1024) return bad(k, v, "must be a number of subscribers from 1 to 1024");
      o->subscribers = uint32_t(u);
    } else if (k == "readers") {
      if (!to_u64(v, &u) || u < 1 || u > kMaxReaders) return bad(k, v, "must be a number of readers from 1 to 64");
      o->readers = uint32_t(u);
    } else if (k == "echo") {
      if (v != "0" && v != "1") return bad(k, v, "must be 0 or 1");
      o->echo = v == "1";
    } else if (k == "slow-ns") {
      if (!to_i64(v, &i) || i < 0 || i > kMaxDurationNs) return bad(k, v, "must be a non-negative integer of nanoseconds");
      o->slow_ns = i;
    } else if (k == "host") {
      o->host = v;
    } else if (k == "port") {
      o->ports.clear();
      size_t start = 0;
      while (start <= v.size()) {
        size_t end = v.find(',', start);
        if (end == std::string::npos) end = v.size();
        if (!to_u64(v.substr(start, end - start), &u) || u > 65535 || o->ports.size() >= 1024)
          return bad(k, v, "is not a port number (or a list of them, one per subscriber)");
        o->ports.push_back(uint16_t(u));
        start = end + 1;
      }
      o->port = o->ports.front();
    } else if (k == "cpu") {
      if (!to_i64(v, &i) || i < -1 || i > 4095) return bad(k, v, "must be a core number, or -1 for unpinned");
      o->cpu = int(i);
    } else if (k == "wait") {
      if (v == "block") o->wait = WaitMode::block;
      else if (v == "spin") o->wait = WaitMode::spin;
      else return bad(k, v, "is not block or spin");
    } else if (k == "run-id") {
      if (!to_u64(v, &u) || u > 0xFFFFFFFFULL) return bad(k, v, "must be a 32-bit unsigned integer");
      o->run_id = uint32_t(u);
    } else if (k == "key") {
      if (v != "stdin") return bad(k, v, "must be 'stdin' (the key is never given on the command line)");
      o->key_from_stdin = true;
    } else if (k == "samples-out") {
      if (v.empty()) return bad(k, v, "must be a file path");
      o->samples_out = v;
    } else if (k == "samples-max") {
      if (!to_u64(v, &u) || u > (1ULL << 24)) return bad(k, v, "must be a number of samples up to 2^24");
      o->samples_max = size_t(u);
    } else if (k == "count") {
      if (!to_u64(v, &u)) return bad(k, v, "must be a whole number of samples (0: no limit)");
      o->count = u;
    } else if (k == "seq-start") {
      if (!to_u64(v, &u)) return bad(k, v, "must be a 64-bit unsigned integer");
      o->seq_start = u;
    } else if (k == "reliability") {
      if (v != "reliable" && v != "best-effort") return bad(k, v, "is not reliable or best-effort");
      o->qos.reliability = v;
    } else if (k == "history") {
      if (v == "keep-all") {
        o->qos.keep_all = true;
      } else if (v.rfind("keep-last:", 0) == 0 && to_u64(v.substr(10), &u) && u >= 1 && u <= uint64_t(kMaxHistoryDepth)) {
        o->qos.history_depth = int(u);
      } else {
        return bad(k, v, "is not keep-last:N (N >= 1) or keep-all");
      }
    } else if (k == "durability") {
      if (v != "volatile" && v != "transient-local") return bad(k, v, "is not volatile or transient-local");
      o->qos.durability = v;
    } else if (k == "instances") {
      if (!to_u64(v, &u) || u > kMaxInstances) return bad(k, v, "must be an instance count (0 = unkeyed)");
      o->qos.instances = uint32_t(u);
    } else if (k == "async") {
      if (v != "0" && v != "1") return bad(k, v, "must be 0 or 1");
      o->qos.async = v == "1";
    } else if (k == "batch") {
      if (v != "0" && v != "1") return bad(k, v, "must be 0 or 1");
      o->qos.batch = v == "1";
    } else if (k == "congestion") {
      if (v != "block" && v != "drop") return bad(k, v, "is not block or drop");
      o->qos.congestion = v;
    } else if (k == "receive") {
      if (v.empty()) return bad(k, v, "must name a receive mode (see: mwperf-agent list)");
      o->qos.receive = v == "default" ? "" : v;
    } else if (k == "transport") {
      if (v.empty()) return bad(k, v, "must name a transport (see: mwperf-agent list)");
      o->qos.transport = v == "default" ? "" : v;
    } else if (k == "nic") {
      o->qos.nic = v;
    } else if (k == "isolated") {
      if (v != "0" && v != "1") return bad(k, v, "must be 0 or 1");
      o->qos.isolated = v == "1";
    } else if (k == "peer") {
      o->qos.peer = v;
    } else if (k == "domain") {
      if (!to_u64(v, &u) || u > 232) return bad(k, v, "must be a DDS domain id 0..232");
      o->qos.domain = uint32_t(u);
    } else if (k == "precision") {
      char* end = nullptr;
      const double r = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(r >= 0 && r < 1)) return bad(k, v, "must be a fraction in [0, 1), e.g. 0.05");
      o->precision = r;
    } else if (k == "confidence") {
      char* end = nullptr;
      const double r = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(r >= 0.5 && r <= 0.999)) return bad(k, v, "must be a level from 0.5 to 0.999, e.g. 0.95");
      o->confidence = r;
    } else if (k == "clock") {
      if (v == "monotonic") o->clock = StampClock::monotonic;
      else if (v == "realtime") o->clock = StampClock::realtime;
      else return bad(k, v, "is not monotonic or realtime");
    } else if (k == "stamp-slack-ns") {
      if (!to_i64(v, &i) || i < 0 || i > kMaxDurationNs) return bad(k, v, "must be a non-negative integer of nanoseconds");
      o->stamp_slack_ns = i;
    } else if (k == "clock-offset-ns") {
      if (!to_i64(v, &i) || i < -kMaxDurationNs || i > kMaxDurationNs) return bad(k, v, "must be an integer of nanoseconds");
      o->clock_offset_ns = i;
    } else if (k == "cpus") {
      const auto comma = v.find(',');
      int64_t a = 0, b = 0;
      if (comma == std::string::npos || !to_i64(v.substr(0, comma), &a) || !to_i64(v.substr(comma + 1), &b) ||
          a < 0 || b < 0)
        return bad(k, v, "must be two core numbers A,B");
      o->cpu_a = int(a);
      o->cpu_b = int(b);
    } else if (k == "iterations") {
      if (!to_u64(v, &u) || u < 1 || u > 10000000) return bad(k, v, "must be between 1 and 10000000");
      o->iterations = int(u);
    } else {
      return "--" + k + ": unknown option";
    }
  }

  if (o->command == "run") {
    if (o->mw.empty()) return "--mw: missing (the adapter to use)";
    if (o->size == 0) return "--size: missing";
    if (!kv.count("role")) return "--role: missing (pub or sub)";
    if (o->mode == Mode::rate && o->rate_hz <= 0) return "--rate-hz: missing (required in rate mode)";
    if (o->mode == Mode::burst && o->demand == 0) return "--demand: missing (required in burst mode)";
    if (o->readers > 1 && o->role != Role::sub)
      return "--readers: '" + std::to_string(o->readers) + "' is for --role sub (the readers of one subscriber process)";
    if (o->readers > 1 && o->port != 0 && o->ports.size() != o->readers)
      return "--port: '" + kv["port"] + "' must be 0 or one port per reader (--readers " + std::to_string(o->readers) + ")";
  }
  o->key = key_of_run_id(o->run_id);  // until --key stdin hands the run's own over
  return "";
}

// "dir/point-0003.bin" -> "dir/point-0003.sub2.bin": reader i's own samples
// file (the name the controller gives subscriber process i).
namespace {

std::string numbered(const std::string& path, uint32_t i) {
  const size_t slash = path.rfind('/');
  const size_t dot = path.rfind('.');
  const size_t at = dot != std::string::npos && (slash == std::string::npos || dot > slash + 1) ? dot : path.size();
  return path.substr(0, at) + ".sub" + std::to_string(i) + path.substr(at);
}

}  // namespace

std::vector<Options> reader_options(const Options& o) {
  const uint32_t n = o.role == Role::sub ? o.readers : 1;
  std::vector<Options> out(n, o);
  for (uint32_t i = 0; i < n; ++i) {
    Options& r = out[i];
    r.reader = i;
    r.readers = n;
    if (n == 1) continue;
    r.echo = o.echo && i == 0;
    r.slow_ns = i + 1 == n ? o.slow_ns : 0;
    if (i > 0 && !r.samples_out.empty()) r.samples_out = numbered(o.samples_out, i);
    r.port = o.ports.size() == n ? o.ports[i] : o.port;
    r.ports.assign(1, r.port);
  }
  return out;
}

AdapterConfig adapter_config(const Options& r) {
  AdapterConfig cfg = r.qos;
  cfg.role = r.role;
  cfg.run_id = r.run_id;
  cfg.host = r.host;
  cfg.port = r.port;
  cfg.ports = r.ports;
  cfg.size = r.size;
  cfg.wait = r.wait;
  cfg.subscribers = r.role == Role::pub ? r.subscribers : 1;
  cfg.fan_out = std::max(r.subscribers, r.readers);
  return cfg;
}

}  // namespace mwperf
