#include "core/json.h"

#include <cmath>
#include <cstdio>

namespace mwperf {

std::string json_escape(const std::string& s) {
  std::string o;
  o.reserve(s.size() + 2);
  for (const char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          o += b;
        } else {
          o += c;
        }
    }
  }
  return o;
}

void JsonObject::key(const char* k) {
  if (body_.size() > 1) body_ += ',';
  body_ += '"';
  body_ += k;
  body_ += "\":";
}

JsonObject& JsonObject::str(const char* k, const std::string& v) {
  key(k);
  body_ += '"' + json_escape(v) + '"';
  return *this;
}
JsonObject& JsonObject::num(const char* k, int64_t v) {
  key(k);
  body_ += std::to_string(v);
  return *this;
}
JsonObject& JsonObject::unum(const char* k, uint64_t v) {
  key(k);
  body_ += std::to_string(v);
  return *this;
}
JsonObject& JsonObject::real(const char* k, double v) {
  key(k);
  if (!std::isfinite(v)) {
    body_ += "null";
    return *this;
  }
  char b[64];
  std::snprintf(b, sizeof b, "%.6f", v);
  body_ += b;
  return *this;
}
JsonObject& JsonObject::boolean(const char* k, bool v) {
  key(k);
  body_ += v ? "true" : "false";
  return *this;
}
JsonObject& JsonObject::null(const char* k) {
  key(k);
  body_ += "null";
  return *this;
}
JsonObject& JsonObject::raw(const char* k, const std::string& json) {
  key(k);
  body_ += json;
  return *this;
}
JsonObject& JsonObject::ints(const char* k, const std::vector<int>& v) {
  key(k);
  body_ += '[';
  for (size_t i = 0; i < v.size(); ++i) body_ += (i ? "," : "") + std::to_string(v[i]);
  body_ += ']';
  return *this;
}
JsonObject& JsonObject::stats(const char* k, const Summary& s) {
  JsonObject o;
  o.unum("count", s.count);
  if (s.count == 0) {
    for (const char* f : {"mean", "std", "min", "max", "p50", "p90", "p99", "p9999", "p999999"}) o.null(f);
  } else {
    o.real("mean", s.mean).real("std", s.std).num("min", s.min).num("max", s.max);
    o.num("p50", s.p50).num("p90", s.p90).num("p99", s.p99).num("p9999", s.p9999).num("p999999", s.p999999);
  }
  o.unum("kept", s.kept).boolean("exact", s.exact);
  auto ci = [](const Interval& i) {
    return i.valid ? "[" + std::to_string(i.lo) + "," + std::to_string(i.hi) + "]" : std::string("null");
  };
  o.raw("p50_ci95", ci(s.p50_ci)).raw("p99_ci95", ci(s.p99_ci));
  return raw(k, o.done());
}

JsonObject& JsonObject::convergence(const char* k, const Convergence& c, int64_t divisor) {
  if (c.after_ns < 0) return null(k);
  auto ci = [divisor](const Interval& i) {
    return "[" + std::to_string(i.lo / divisor) + "," + std::to_string(i.hi / divisor) + "]";
  };
  JsonObject o;
  o.num("after_ns", c.after_ns).unum("kept", c.kept).raw("p50_ci", ci(c.p50)).raw("p99_ci", ci(c.p99));
  return raw(k, o.done());
}

void emit(const std::string& line) {
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

}  // namespace mwperf
