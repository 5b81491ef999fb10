// The floor's socket ping-pongs (core/floor.h): a Unix stream socket pair,
// and two UDP sockets on 127.0.0.1 connected to each other. --wait block:
// blocking send/recv (with the timeout as SO_SNDTIMEO/SO_RCVTIMEO, so no
// extra call is made per message); --wait spin: non-blocking calls polled.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/floor.h"
#include "util/clock.h"

namespace mwperf {

namespace {

class SocketLink : public PingLink {
 public:
  explicit SocketLink(bool datagram) : datagram_(datagram) {}
  ~SocketLink() override {
    for (int& fd : fd_)
      if (fd >= 0) close(fd);
  }
  const char* kind() const override { return datagram_ ? "udp" : "unix"; }
  const char* method() const override { return datagram_ ? "datagram" : "stream"; }

  std::string open(size_t size, WaitMode wait, int64_t timeout_ns) override {
    if (datagram_ && size > kUdpMaxPayload) return "UDP carries at most 65507 bytes per datagram";
    size_ = size;
    timeout_ns_ = timeout_ns;
    flags_ = MSG_NOSIGNAL | (wait == WaitMode::spin ? MSG_DONTWAIT : 0);
    out_.assign(size, 0x5a);
    in_.assign(size, 0);
    const std::string e = datagram_ ? udp_pair() : unix_pair();
    if (!e.empty()) return e;
    const timeval tv{time_t(timeout_ns / 1'000'000'000), suseconds_t(timeout_ns % 1'000'000'000 / 1000)};
    for (int fd : fd_)
      if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0 ||
          setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0)
        return std::string("setsockopt: ") + std::strerror(errno);
    return "";
  }

  void forked(bool peer) override {
    close(fd_[peer ? 0 : 1]);
    fd_[peer ? 0 : 1] = -1;
  }

  void serve() override {
    for (;;) {
      std::string e;
      do e = receive(fd_[1]);
      while (e == no_answer(timeout_ns_));  // the peer waits as long as it takes
      if (!e.empty() || !transmit(fd_[1], in_.data()).empty()) return;
    }
  }

  std::string ping(uint64_t seq) override {
    std::memcpy(out_.data(), &seq, sizeof seq < size_ ? sizeof seq : size_);
    std::string e = transmit(fd_[0], out_.data());
    if (e.empty()) e = receive(fd_[0]);
    if (e.empty() && size_ >= sizeof seq && std::memcmp(in_.data(), &seq, sizeof seq) != 0)
      e = "answered with another message than the one sent";
    return e;
  }

 private:
  std::string unix_pair() {
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fd_) != 0)
      return std::string("socketpair: ") + std::strerror(errno);
    return "";
  }

  std::string udp_pair() {
    sockaddr_in addr[2];
    for (int i = 0; i < 2; ++i) {
      fd_[i] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
      addr[i] = sockaddr_in{};
      addr[i].sin_family = AF_INET;
      addr[i].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      socklen_t len = sizeof addr[i];
      if (fd_[i] < 0 || bind(fd_[i], reinterpret_cast<sockaddr*>(&addr[i]), sizeof addr[i]) != 0 ||
          getsockname(fd_[i], reinterpret_cast<sockaddr*>(&addr[i]), &len) != 0)
        return std::string("udp socket on 127.0.0.1: ") + std::strerror(errno);
    }
    for (int i = 0; i < 2; ++i)
      if (connect(fd_[i], reinterpret_cast<sockaddr*>(&addr[1 - i]), sizeof addr[1 - i]) != 0)
        return std::string("udp connect: ") + std::strerror(errno);
    return "";
  }

  // One look more: false once a spinning wait has lasted the timeout (a
  // blocking call has timed out itself: EAGAIN with SO_RCVTIMEO).
  bool again(uint32_t& spins, int64_t& deadline) const {
    if (!(flags_ & MSG_DONTWAIT)) return false;
    cpu_relax();
    if ((++spins % kSpinsPerClockRead) != 0) return true;
    const int64_t t = now_ns();
    if (deadline == 0) deadline = t + timeout_ns_;
    return t < deadline;
  }

  std::string transmit(int fd, const uint8_t* data) {
    size_t sent = 0;
    uint32_t spins = 0;
    int64_t deadline = 0;
    while (sent < size_) {
      const ssize_t n = send(fd, data + sent, size_ - sent, flags_);
      if (n > 0) {
        sent += size_t(n);
      } else if (n < 0 && errno == EINTR) {
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)) {
        if (!again(spins, deadline)) return no_answer(timeout_ns_);
      } else {
        return std::string("send: ") + std::strerror(errno);
      }
    }
    return "";
  }

  std::string receive(int fd) {
    size_t got = 0;
    uint32_t spins = 0;
    int64_t deadline = 0;
    while (got < size_) {
      const ssize_t n = recv(fd, in_.data() + got, size_ - got, flags_);
      if (n > 0 && datagram_) {
        if (size_t(n) != size_)
          return "a datagram of " + std::to_string(n) + " bytes instead of " + std::to_string(size_);
        got = size_;
      } else if (n > 0) {
        got += size_t(n);
      } else if (n == 0) {
        return "closed the connection";
      } else if (errno == EINTR) {
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        if (!again(spins, deadline)) return no_answer(timeout_ns_);
      } else {
        return std::string("recv: ") + std::strerror(errno);
      }
    }
    return "";
  }

  bool datagram_;
  int fd_[2] = {-1, -1};  // [0] this process's end, [1] the peer's
  size_t size_ = 0;
  int flags_ = MSG_NOSIGNAL;
  int64_t timeout_ns_ = 0;
  std::vector<uint8_t> out_, in_;
};

}  // namespace

std::unique_ptr<PingLink> make_socket_link(bool datagram) { return std::make_unique<SocketLink>(datagram); }

}  // namespace mwperf
