// The floor's memcpy bandwidth (core/floor.h): one message of the size copied
// again and again between two buffers of this process (cache-warm, as a
// message just written is), timed in batches long enough that the clock's
// own cost (~20 ns a reading) stays out of the figure.
#include <algorithm>
#include <cstring>
#include <vector>

#include "core/floor.h"
#include "util/clock.h"

namespace mwperf {

size_t memcpy_batch(size_t size) { return std::max<size_t>(1, (size_t(64) << 10) / std::max<size_t>(size, 1)); }

namespace {

void copy_batch(uint8_t* dst, const uint8_t* src, size_t size, size_t batch) {
  for (size_t k = 0; k < batch; ++k) {
    std::memcpy(dst, src, size);
    asm volatile("" : : "r"(dst) : "memory");  // every copy is made: dst is read after each
  }
}

}  // namespace

FloorResult floor_memcpy(const FloorOptions& o, size_t size, size_t batch, LatencyStats& stats) {
  FloorResult r;
  std::vector<uint8_t> src(size, 0x5a), dst(size, 0);
  const int64_t warm_end = now_ns() + o.budget_ns / 10;
  do copy_batch(dst.data(), src.data(), size, batch);
  while (now_ns() < warm_end);
  const int64_t t0 = now_ns(), end = t0 + o.budget_ns - o.budget_ns / 10;
  int64_t t1 = t0;
  for (uint64_t i = 0; i < o.iterations && t1 < end; ++i) {
    const int64_t t = now_ns();
    copy_batch(dst.data(), src.data(), size, batch);
    t1 = now_ns();
    stats.add(t1 - t);
  }
  r.elapsed_ns = t1 - t0;
  return r;
}

}  // namespace mwperf
