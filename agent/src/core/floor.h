// The floor: what no middleware can beat on this machine, measured at a run's
// sizes, CPU placement and wait strategy (`mwperf-agent floor`):
//
// * memcpy: bytes per second copying one message of the size (the copy a
//   byte-payload interface makes at least once), on the publisher's core;
// * unix:   a ping-pong over a Unix stream socket pair;
// * udp:    a ping-pong over two UDP sockets on 127.0.0.1 (up to 65507 B);
// * shm:    a ping-pong through shared memory: the sender copies the message
//           into a shared slot, the receiver reads it there; it waits on a
//           futex (--wait block) or spins (--wait spin).
//
// The ping-pongs run between this process (on the publisher's core) and a
// forked peer process (on the subscriber's core) that echoes each message,
// both waiting as the run's wait strategy says (blocking calls or a futex;
// non-blocking polls or a spin). Times are integer nanoseconds in the core's
// LatencyStats; nothing is allocated in a timed loop. A peer that does not
// answer within --timeout fails the measurement with that reason.
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/adapter.h"
#include "core/stats.h"

namespace mwperf {

constexpr size_t kFloorMaxSize = size_t(64) << 20;
constexpr size_t kUdpMaxPayload = 65507;
constexpr const char* kFloorKinds = "memcpy,unix,udp,shm";

// What `floor` measures and how: its options (rows of the option table,
// core/option_table.cpp, which also holds their defaults: Options().floor).
struct FloorOptions {
  std::vector<size_t> sizes;
  int cpu_a = -1, cpu_b = -1;  // the publisher's and the subscriber's core; -1: unpinned
  WaitMode wait = WaitMode::block;
  int64_t budget_ns = 0;    // each measurement: warm-up (a tenth) and timed loop
  int64_t timeout_ns = 0;   // how long one answer may take before the peer counts as gone
  uint64_t iterations = 0;  // each measurement: at most this many timed samples
  std::vector<std::string> kinds;
};

// `mwperf-agent floor ...` (its options parsed): one `floor` event per kind
// and size, then `floor_done`; an `error` event and exit 3 when a measurement fails.
int run_floor(const FloorOptions& o);

const char* placement_name(int cpu_a, int cpu_b);

// A spinning wait's pause between two looks (no syscall, no clock read).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// A spinning wait reads the clock only every this many looks, and only once
// it has spun that long: the deadline costs the fast path nothing.
constexpr uint32_t kSpinsPerClockRead = 4096;

// "no answer within 1.0 s"
std::string no_answer(int64_t timeout_ns);

// What one measurement found: stats filled, or an error (empty: ok).
struct FloorResult {
  std::string error;
  int64_t elapsed_ns = 0;  // the timed loop
};

// memcpy of `size` bytes, timed in batches of `batch` copies (each batch's ns in `stats`).
FloorResult floor_memcpy(const FloorOptions& o, size_t size, size_t batch, LatencyStats& stats);
size_t memcpy_batch(size_t size);

// One ping-pong transport, both ends made before the peer is forked.
class PingLink {
 public:
  virtual ~PingLink() = default;
  virtual const char* kind() const = 0;
  virtual const char* method() const = 0;  // stream, datagram, futex, spin
  // Both ends, for messages of `size` bytes; an error message or "".
  virtual std::string open(size_t size, WaitMode wait, int64_t timeout_ns) = 0;
  // In the forked peer: answer every message until killed (returns on an error).
  virtual void serve() = 0;
  // After the fork: each side closes what only the other uses.
  virtual void forked(bool peer) { (void)peer; }
  // In this process: send one message stamped `seq` and wait for its echo.
  // "" or why not (a timeout names it).
  virtual std::string ping(uint64_t seq) = 0;
};

std::unique_ptr<PingLink> make_socket_link(bool datagram);  // unix (stream) or udp
std::unique_ptr<PingLink> make_shm_link();

// Runs the ping-pong: forks the peer (pinned to cpu_b, answering), warms up,
// times round trips into `rtt` until the budget or the iteration cap is
// reached, then kills and reaps the peer. An error names the peer's pid.
FloorResult floor_pingpong(const FloorOptions& o, PingLink& link, size_t size, LatencyStats& rtt);

}  // namespace mwperf
