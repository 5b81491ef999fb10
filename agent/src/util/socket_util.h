// Small helpers shared by the raw socket adapters (udp, tcp).
#pragma once
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/utsname.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

namespace mwperf {

inline bool make_addr(const std::string& host, uint16_t port, sockaddr_in* a) {
  std::memset(a, 0, sizeof *a);
  a->sin_family = AF_INET;
  a->sin_port = htons(port);
  return inet_pton(AF_INET, host.c_str(), &a->sin_addr) == 1;
}

inline uint16_t local_port(int fd) {
  sockaddr_in a;
  socklen_t l = sizeof a;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&a), &l) != 0) return 0;
  return ntohs(a.sin_port);
}

// Applies SO_RCVTIMEO only when it changes, so a steady timeout costs no
// syscall. A negative timeout means none (the socket's own default).
class RecvTimeout {
 public:
  bool apply(int fd, int64_t timeout_ns) {
    if (timeout_ns < 0) timeout_ns = -1;
    if (timeout_ns == current_) return true;
    timeval tv{0, 0};
    if (timeout_ns >= 0) {
      tv.tv_sec = timeout_ns / 1000000000LL;
      tv.tv_usec = (timeout_ns % 1000000000LL) / 1000;
      if (tv.tv_sec == 0 && tv.tv_usec == 0) tv.tv_usec = 1;  // 0 would mean "forever"
    }
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0) return false;
    current_ = timeout_ns;
    return true;
  }

 private:
  int64_t current_ = -1;
};

// Wakes a thread blocked in a socket call with a signal whose handler does
// nothing (installed without SA_RESTART, so the call returns EINTR). A wake
// that lands just before the call is lost: wakers that need it repeat it.
class ThreadWaker {
 public:
  static constexpr int kSignal = SIGURG;  // ignored by default; nothing else here uses it
  ThreadWaker() {
    struct sigaction sa {};
    sa.sa_handler = [](int) {};
    sigemptyset(&sa.sa_mask);
    sigaction(kSignal, &sa, nullptr);
  }
  void enter() {
    thread_.store(pthread_self(), std::memory_order_relaxed);
    inside_.store(true, std::memory_order_release);
  }
  void leave() { inside_.store(false, std::memory_order_relaxed); }
  void wake() {
    if (inside_.load(std::memory_order_acquire)) pthread_kill(thread_.load(std::memory_order_relaxed), kSignal);
  }

 private:
  std::atomic<pthread_t> thread_{};
  std::atomic<bool> inside_{false};
};

// Asks for `want` bytes of socket buffer; returns what the kernel granted.
inline int set_buffer(int fd, int opt, int want) {
  setsockopt(fd, SOL_SOCKET, opt, &want, sizeof want);
  int got = 0;
  socklen_t l = sizeof got;
  getsockopt(fd, SOL_SOCKET, opt, &got, &l);
  return got;
}

// The IPv4 address of interface `name` ("" if it has none); an address is
// returned as it is.
inline std::string interface_ipv4(const std::string& name) {
  in_addr probe;
  if (inet_pton(AF_INET, name.c_str(), &probe) == 1) return name;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return "";
  std::string found;
  for (ifaddrs* i = list; i != nullptr && found.empty(); i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET || name != i->ifa_name) continue;
    char text[INET_ADDRSTRLEN];
    if (inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, text, sizeof text)) found = text;
  }
  freeifaddrs(list);
  return found;
}

inline std::string kernel_version() {
  utsname u;
  if (uname(&u) != 0) return "linux";
  return std::string("linux ") + u.release;
}

inline std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

}  // namespace mwperf
