#include "core/control.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace mwperf {

void StopSignal::start_stdin_reader(bool eof_is_stop) {
  std::thread([this, eof_is_stop] {
    char line[128];
    while (std::fgets(line, sizeof line, stdin)) {
      if (std::strncmp(line, "stop", 4) == 0) {
        char* end = nullptr;
        const long long n = std::strtoll(line + 4, &end, 10);
        request(end == line + 4 ? -1 : n);  // "stop" without a count: unknown
        return;
      }
    }
    if (eof_is_stop) request(-1);  // the controller went away
  }).detach();
}

}  // namespace mwperf
