// Connext's log while the connext adapter makes its entities: kept for the
// error message, and passed on to stderr (Connext logs to stdout by default,
// which is the agent's control channel).
#pragma once
#include <cstdio>
#include <cstdlib>
#include <string>

#include "adapters/connext/connext_c.h"

namespace mwperf {

class LogCapture {
 public:
  LogCapture() : mem_(open_memstream(&buf_, &len_)) {
    if (mem_) NDDS_Config_Logger_set_output_file(NDDS_Config_Logger_get_instance(), mem_);
  }
  ~LogCapture() { finish(); }
  // The first two lines (without their entity context), and the whole log to stderr.
  std::string finish() {
    if (!mem_) return text_;
    NDDS_Config_Logger_set_output_file(NDDS_Config_Logger_get_instance(), stderr);
    std::fclose(mem_);
    mem_ = nullptr;
    const std::string all(buf_, len_);
    std::free(buf_);
    std::fputs(all.c_str(), stderr);
    size_t start = 0;
    for (int lines = 0; lines < 2 && start < all.size();) {
      size_t end = all.find('\n', start);
      if (end == std::string::npos) end = all.size();
      std::string line = all.substr(start, end - start);
      start = end + 1;
      if (line.find_first_not_of(' ') == std::string::npos) continue;
      if (const size_t ctx = line.find("] "); line[line.find_first_not_of(' ')] == '[' && ctx != std::string::npos)
        line = line.substr(ctx + 2);
      text_ += (lines++ ? "; " : "") + line.substr(line.find_first_not_of(' '));
    }
    if (text_.size() > 400) text_ = text_.substr(0, 400) + "...";
    return text_;
  }

 private:
  char* buf_ = nullptr;
  size_t len_ = 0;
  FILE* mem_;
  std::string text_;
};

}  // namespace mwperf
