// A minimal JSON object writer for the agent's events (never used in a hot loop).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/stats.h"

namespace mwperf {

class JsonObject {
 public:
  JsonObject& str(const char* key, const std::string& v);
  JsonObject& num(const char* key, int64_t v);
  JsonObject& unum(const char* key, uint64_t v);
  JsonObject& real(const char* key, double v);
  JsonObject& boolean(const char* key, bool v);
  JsonObject& null(const char* key);
  JsonObject& raw(const char* key, const std::string& json);  // v is already JSON
  JsonObject& ints(const char* key, const std::vector<int>& v);
  JsonObject& stats(const char* key, const Summary& s);
  // null when not reached; intervals divided by `divisor` (2: RTT -> one-way)
  JsonObject& convergence(const char* key, const Convergence& c, int64_t divisor);
  std::string done() const { return body_ + "}"; }

 private:
  void key(const char* k);
  std::string body_ = "{";
};

std::string json_escape(const std::string& s);

// Writes one line to stdout and flushes it: the control channel.
void emit(const std::string& line);

}  // namespace mwperf
