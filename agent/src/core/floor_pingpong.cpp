// The floor's ping-pongs: a forked peer process echoes, this process times
// the round trips (core/floor.h).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/floor.h"
#include "util/clock.h"
#include "util/sysinfo.h"

namespace mwperf {

std::string no_answer(int64_t timeout_ns) {
  char text[64];
  std::snprintf(text, sizeof text, "no answer within %.1f s", double(timeout_ns) / 1e9);
  return text;
}

namespace {

// The peer says it is pinned and serving ("+") or why it cannot ("-reason")
// on a pipe; "" once it has, else why not (it died, or said nothing in time).
std::string await_peer(int fd, int64_t timeout_ns) {
  pollfd p{fd, POLLIN, 0};
  const int ms = int(timeout_ns / 1'000'000) + 1;
  int r;
  do r = poll(&p, 1, ms);
  while (r < 0 && errno == EINTR);
  if (r == 0) return "did not start: " + no_answer(timeout_ns);
  char text[256];
  const ssize_t n = read(fd, text, sizeof text - 1);
  if (n <= 0) return "ended before it started serving";
  text[n] = '\0';
  return text[0] == '+' ? std::string() : std::string(text + 1);
}

void serve_as_peer(PingLink& link, int ready, int cpu) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the agent that timed it
  const std::string pin = pin_to_cpu(cpu);
  const std::string said = pin.empty() ? "+" : "-" + pin;
  if (write(ready, said.data(), said.size()) < 0) _exit(1);
  close(ready);
  if (pin.empty()) {
    link.forked(true);
    link.serve();
  }
  _exit(0);
}

}  // namespace

FloorResult floor_pingpong(const FloorOptions& o, PingLink& link, size_t size, LatencyStats& rtt) {
  FloorResult r;
  r.error = link.open(size, o.wait, o.timeout_ns);
  if (!r.error.empty()) return r;
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  const pid_t me = getpid();
  const pid_t peer = fork();
  if (peer == 0) {
    close(ready[0]);
    if (getppid() != me) _exit(0);  // the agent is gone already
    serve_as_peer(link, ready[1], o.cpu_b);
  }
  close(ready[1]);
  if (peer < 0) {
    close(ready[0]);
    r.error = std::string("fork: ") + std::strerror(errno);
    return r;
  }
  const std::string started = await_peer(ready[0], o.timeout_ns);
  close(ready[0]);
  const std::string who = "the peer (pid " + std::to_string(peer) + "): ";
  if (!started.empty()) {
    r.error = who + started;
  } else {
    link.forked(false);
    // Warm-up: a tenth of the budget (one round trip at least), then the timed loop.
    const int64_t warm_end = now_ns() + o.budget_ns / 10;
    uint64_t seq = 0;
    do r.error = link.ping(++seq);
    while (r.error.empty() && now_ns() < warm_end);
    const int64_t t0 = now_ns(), end = t0 + o.budget_ns - o.budget_ns / 10;
    int64_t t1 = t0;
    for (uint64_t i = 0; r.error.empty() && i < o.iterations && t1 < end; ++i) {
      const int64_t t = now_ns();
      r.error = link.ping(++seq);
      t1 = now_ns();
      if (r.error.empty()) rtt.add(t1 - t);
    }
    r.elapsed_ns = t1 - t0;
    if (!r.error.empty()) r.error = who + r.error;
  }
  kill(peer, SIGKILL);  // also when stopped: nothing of the peer is left behind
  while (waitpid(peer, nullptr, 0) < 0 && errno == EINTR) {
  }
  return r;
}

}  // namespace mwperf
