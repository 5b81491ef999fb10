// --samples-out: the headline latency samples of a point, for the report's
// histogram and time series and for compare's significance test. Written once,
// after the measured phase, never from the hot loop.
#include <cstdio>

#include "core/session.h"

namespace mwperf {

void write_samples(JsonObject& j, const Options& o, const LatencyStats& s, int64_t divisor) {
  if (o.samples_out.empty()) return;
  std::FILE* f = std::fopen(o.samples_out.c_str(), "wb");
  if (f == nullptr) {
    j.str("samples_error", "cannot write " + o.samples_out);
    return;
  }
  const size_t n = s.write_samples(f, divisor);
  const bool ok = std::fclose(f) == 0;
  j.unum("samples_written", ok ? n : 0).boolean("samples_time_ordered", true);
}

}  // namespace mwperf
