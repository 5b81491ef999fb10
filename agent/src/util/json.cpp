#include "util/json.h"

#include <cmath>
#include <cstdio>
#include <mutex>

namespace mwperf {

std::string json_escape(const std::string& s) {
  std::string o;
  o.reserve(s.size() + 2);
  for (const char c : s) {
    switch (c) {
      case '"':
        o += "\\\"";
        break;
      case '\\':
        o += "\\\\";
        break;
      case '\n':
        o += "\\n";
        break;
      case '\t':
        o += "\\t";
        break;
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

std::string json_list(const std::string& list) {
  std::string o = "[";
  size_t start = 0;
  while (start < list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    if (end > start) o += (o.size() > 1 ? ",\"" : "\"") + json_escape(list.substr(start, end - start)) + "\"";
    start = end + 1;
  }
  return o + "]";
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
JsonObject& JsonObject::strs(const char* k, const std::vector<std::string>& v) {
  key(k);
  body_ += '[';
  for (size_t i = 0; i < v.size(); ++i) body_ += (i ? ",\"" : "\"") + json_escape(v[i]) + "\"";
  body_ += ']';
  return *this;
}

void emit(const std::string& line) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lk(mu);
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

}  // namespace mwperf
