#include "core/options.h"

#include <algorithm>
#include <cstdlib>

#include "core/option_table.h"
#include "core/payload.h"
#include "core/security.h"

namespace mwperf {

const char* to_string(StampClock c) { return c == StampClock::realtime ? "realtime" : "monotonic"; }

const char* to_string(Mode m) {
  switch (m) {
    case Mode::latency:
      return "latency";
    case Mode::throughput:
      return "throughput";
    case Mode::rate:
      return "rate";
    case Mode::burst:
      return "burst";
  }
  return "?";
}

Options::Options() {
  for (const OptionRow& r : option_rows()) {
    Value v;
    if (r.def != nullptr && parse_value(r, r.def, &v).empty()) r.set(*this, v);
  }
}

const std::string* Options::given_text(const char* name) const {
  for (const auto& [row, text] : given)
    if (std::string(row->name) == name) return &text;
  return nullptr;
}

namespace {

std::string names(unsigned bits, const char* const* all, unsigned n, const char* joint) {
  std::string out;
  for (unsigned i = 0, seen = 0; i < n; ++i)
    if (bits & (1u << i)) out += std::string(seen++ ? joint : "") + all[i];
  return out;
}

// The first of command c's options required in this role and mode (any, for
// a command without them) that was not given: "--NAME: missing ...", or "".
std::string missing(Command c, const Options& o, unsigned role = kBothRoles, unsigned mode = kAnyMode) {
  for (const OptionRow& r : option_rows()) {
    if (r.command != c || !r.required || !(r.roles & role) || !(r.modes & mode) || o.given_text(r.name) != nullptr)
      continue;
    return "--" + std::string(r.name) + ": missing" +
           (r.modes == kAnyMode ? std::string() : std::string(" (required with --mode ") + to_string(o.mode) + ")");
  }
  return "";
}

// What the given options must satisfy together: each applies to this role
// and mode, and what is required is there.
std::string check_run(const Options& o) {
  static const char* const modes[] = {"latency", "throughput", "rate", "burst"};
  static const char* const roles[] = {"pub", "sub"};
  const unsigned role = o.role == Role::pub ? kPub : kSub, mode = 1u << unsigned(o.mode);
  for (const auto& [row, text] : o.given) {
    if (!(row->roles & role))
      return "--" + std::string(row->name) + ": only for --role " + names(row->roles, roles, 2, " or ");
    if (!(row->modes & mode))
      return "--" + std::string(row->name) + ": only with --mode " + names(row->modes, modes, 4, " or ");
  }
  if (std::string e = missing(Command::run, o, role, mode); !e.empty()) return e;
  if (o.subscriber_index >= o.subscribers)
    return "--subscriber-index: '" + std::to_string(o.subscriber_index) + "' must be below --subscribers " +
           std::to_string(o.subscribers);
  // The subscriber reads the payload only to check what arrives (--check-payload).
  if (const std::string why = o.role == Role::pub || o.check_payload ? Payload::check(o.payload, o.size) : "";
      !why.empty())
    return "--payload: '" + o.payload + "' " + why;
  if (o.reuse > 0 && o.size > o.reuse)
    return "--size: '" + std::to_string(o.size) + "' must be at most --reuse " + std::to_string(o.reuse) +
           " (the largest message the agent pair is opened for)";
  const size_t readers = o.role == Role::sub && o.subscribers_as_threads ? o.subscribers : 1;
  if (readers > 1 && o.port != 0 && o.ports.size() != readers)
    return "--port: '" + *o.given_text("port") + "' must be 0 or one port per reader (--subscribers " +
           std::to_string(readers) + " --subscribers-as threads)";
  return "";
}

}  // namespace

std::string parse_options(int argc, const char* const* argv, Options* o) {
  // The run id comes from the environment (MWPERF_RUN_ID), where other users
  // cannot read it as they can a command line; --run-id still overrides.
  if (const char* env = std::getenv("MWPERF_RUN_ID")) {
    Value v;
    if (!parse_value(*find_option("run-id"), env, &v).empty())
      return std::string("MWPERF_RUN_ID=") + env + ": must be a 32-bit unsigned integer";
    o->run_id = uint32_t(v.u);
  }
  static const char* const commands = "run, list, wakeup, floor, discover, version, clock, cleanup";
  if (argc < 2) return std::string("missing command (") + commands + ")";
  o->command = argv[1];
  const Command* command = nullptr;  // nullptr: a command without options
  static const Command with_options[] = {Command::run, Command::wakeup, Command::floor, Command::discover};
  for (const Command& c : with_options)
    if (o->command == to_string(c)) command = &c;
  if (command == nullptr && o->command != "list" && o->command != "version" && o->command != "clock" &&
      o->command != "cleanup")
    return "unknown command '" + o->command + "' (" + commands + ")";

  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--", 0) != 0) return "unexpected argument '" + a + "'";
    const OptionRow* row = command == nullptr ? nullptr : find_option(a.substr(2), *command);
    if (row == nullptr) return a + ": unknown option" + (command != nullptr ? "" : " (" + o->command + " takes none)");
    if (i + 1 >= argc) return a + ": missing value";
    const std::string text = argv[++i];
    if (o->given_text(row->name) != nullptr) return a + ": given twice";
    Value v;
    const std::string why = parse_value(*row, text, &v);
    if (!why.empty()) return a + ": '" + text + "' " + why;
    row->set(*o, v);
    o->given.emplace_back(row, text);
  }
  o->key = key_of_run_id(o->run_id);  // until --key stdin hands the run's own over
  if (command == nullptr) return "";
  return *command == Command::run ? check_run(*o) : missing(*command, *o);
}

namespace {

// `next`'s arguments: separated by spaces, each with '%', ' ', tab and
// newline written %25, %20, %09, %0A (a path may hold a space).
std::string unescape(const std::string& word, bool* ok) {
  std::string out;
  for (size_t i = 0; i < word.size(); ++i) {
    if (word[i] != '%') {
      out += word[i];
      continue;
    }
    const std::string hex = word.substr(i + 1, 2);
    char* end = nullptr;
    const long c = hex.size() == 2 ? std::strtol(hex.c_str(), &end, 16) : -1;
    if (c < 0 || end != hex.c_str() + 2) {
      *ok = false;
      return word;
    }
    out += char(c);
    i += 2;
  }
  return out;
}

}  // namespace

std::string parse_next(const Options& base, const std::string& args, uint32_t point, Options* out) {
  if (base.reuse == 0) return "next: this agent was not started with --reuse";
  if (point >= kMaxPairPoints)
    return "next: an agent pair serves at most " + std::to_string(kMaxPairPoints) + " points (start a fresh pair)";
  std::vector<std::string> words;
  for (size_t at = 0; at < args.size();) {
    const size_t end = std::min(args.find(' ', at), args.size());
    if (end > at) {
      bool ok = true;
      words.push_back(unescape(args.substr(at, end - at), &ok));
      if (!ok) return "next: '" + args.substr(at, end - at) + "' has a bad %-escape";
    }
    at = end + 1;
  }
  Options o = base;
  std::vector<std::pair<const OptionRow*, std::string>> given;  // this point's own
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& a = words[i];
    if (a.rfind("--", 0) != 0) return "next: unexpected argument '" + a + "'";
    const OptionRow* row = find_option(a.substr(2));
    if (row == nullptr) return "next: " + a + ": unknown option";
    if (!row->pair) return "next: " + a + ": cannot change between the points of one agent pair (a fresh pair can)";
    if (i + 1 >= words.size()) return "next: " + a + ": missing value";
    const std::string& text = words[++i];
    for (const auto& g : given)
      if (g.first == row) return "next: " + a + ": given twice";
    Value v;
    if (const std::string why = parse_value(*row, text, &v); !why.empty())
      return "next: " + a + ": '" + text + "' " + why;
    row->set(o, v);
    given.emplace_back(row, text);
  }
  // The point's options: the pair's, with this point's in place of theirs.
  for (const auto& g : given) {
    auto& all = o.given;
    all.erase(std::remove_if(all.begin(), all.end(), [&](const auto& e) { return e.first == g.first; }), all.end());
    all.push_back(g);
  }
  if (const std::string e = check_run(o); !e.empty()) return "next: " + e;
  o.pair_point = point;
  o.seq_start = base.seq_start + (uint64_t(point) << kPairPointShift);
  *out = std::move(o);
  return "";
}

// "dir/point-0003.bin" -> "dir/point-0003.sub2.bin": subscriber g's own samples file.
namespace {

std::string numbered(const std::string& path, uint32_t g) {
  const size_t slash = path.rfind('/');
  const size_t dot = path.rfind('.');
  const size_t at = dot != std::string::npos && (slash == std::string::npos || dot > slash + 1) ? dot : path.size();
  return path.substr(0, at) + ".sub" + std::to_string(g) + path.substr(at);
}

}  // namespace

std::vector<Options> reader_options(const Options& o) {
  const uint32_t n = o.role == Role::sub && o.subscribers_as_threads ? o.subscribers : 1;
  std::vector<Options> out(n, o);
  for (uint32_t i = 0; i < n; ++i) {
    Options& r = out[i];
    const uint32_t g = o.role == Role::sub ? o.subscriber_index + i : 0;  // which subscriber of the point
    r.reader = i;
    r.readers = n;
    r.echo = g == 0;
    r.slow_ns = o.role == Role::sub && g + 1 == o.subscribers ? o.slow_ns : 0;
    if (g > 0 && !r.samples_out.empty()) r.samples_out = numbered(o.samples_out, g);
    if (n == 1) continue;
    r.port = o.ports.size() == n ? o.ports[i] : o.port;
    r.ports.assign(1, r.port);
  }
  return out;
}

std::string check_enclave(const Options& o) {
  if (!secured(o.qos.security)) return "";
  Enclave e;
  if (o.qos.enclave.empty()) return "--security " + o.qos.security + ": needs --enclave DIR (its keys and documents)";
  if (const std::string why = read_enclave(o.qos.enclave, &e); !why.empty())
    return "--enclave: '" + o.qos.enclave + "' is no enclave (" + why + ")";
  return "";
}

AdapterConfig adapter_config(const Options& r) {
  AdapterConfig cfg = r.qos;
  cfg.role = r.role;
  cfg.run_id = r.run_id;
  cfg.host = r.host;
  cfg.port = r.port;
  cfg.ports = r.ports;
  cfg.size = std::max<size_t>(r.size, r.reuse);  // an agent pair: the largest message of its points
  cfg.wait = r.wait;
  cfg.subscribers = r.role == Role::pub ? r.subscribers : 1;
  cfg.fan_out = std::max(r.subscribers, r.readers);
  return cfg;
}

}  // namespace mwperf
