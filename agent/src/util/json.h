// A minimal JSON object writer for the agent's events (never used on the
// send/receive path).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace mwperf {

class JsonObject {
 public:
  JsonObject& str(const char* key, const std::string& v);
  JsonObject& num(const char* key, int64_t v);
  JsonObject& unum(const char* key, uint64_t v);
  JsonObject& real(const char* key, double v);  // null when not finite
  JsonObject& boolean(const char* key, bool v);
  JsonObject& null(const char* key);
  JsonObject& raw(const char* key, const std::string& json);  // already JSON
  JsonObject& ints(const char* key, const std::vector<int>& v);
  JsonObject& strs(const char* key, const std::vector<std::string>& v);
  std::string done() const { return body_ + "}"; }

 private:
  void key(const char* k);
  std::string body_ = "{";
};

std::string json_escape(const std::string& s);
// ["a","b"] from a comma-separated list ("" gives []).
std::string json_list(const std::string& comma_separated);

// Writes one line to stdout and flushes it: the control channel. Thread-safe.
void emit(const std::string& line);

}  // namespace mwperf
