// Raw UDPv4 unicast: the floor every middleware is compared with.
// pub: one connected socket (data out, echoes in). sub: one bound socket; echoes
// go back to the sender of the last datagram received. Receives block without
// a timer: the sub is woken by a one-byte datagram to itself, the pub (whose
// connected socket takes datagrams from the sub only) by a signal.
#include <fcntl.h>
#include <unistd.h>

#include <vector>

#include "core/adapter.h"
#include "util/socket_util.h"

namespace mwperf {
namespace {

constexpr size_t kUdpMax = 65507;  // 65535 - 8 (UDP) - 20 (IPv4)
constexpr int kWantBuffer = 4 << 20;

Description describe() {
  Description d;
  d.max_subscribers = 1;  // one unicast peer
  d.max_size = kUdpMax;
  d.size_note = "the largest UDP payload over IPv4: 65535 - 8 (UDP header) - 20 (IPv4 header)";
  d.transports = d.transport = "udp";
  d.reliabilities = d.reliability = "best-effort";
  d.notes = "one datagram per message; no retransmission";
  return d;
}

class UdpAdapter final : public Adapter {
 public:
  ~UdpAdapter() override { close(); }
  const Description& description() const override {
    static const Description d = describe();
    return d;
  }
  std::string version() const override { return kernel_version(); }
  std::string effective_config() const override {
    return "{\"so_rcvbuf\":" + std::to_string(rcvbuf_) + ",\"so_sndbuf\":" + std::to_string(sndbuf_) + ",\"wait\":\"" +
           (timed_ ? "SO_RCVTIMEO" : "untimed") + "\"}";
  }

  Errc open(const AdapterConfig& cfg) override {
    transport_ = "udp";
    reliability_ = "best-effort";
    receive_ = "read";
    if (cfg.size > kUdpMax)
      return fail(Errc::unsupported,
                  "udp: size " + std::to_string(cfg.size) + " exceeds UDP's maximum payload of 65507 bytes");
    if (cfg.role == Role::pub && cfg.port == 0)
      return fail(Errc::unsupported, "udp: --port missing (the port the subscriber reported)");
    sockaddr_in a;
    if (!make_addr(cfg.host, cfg.port, &a)) return fail(Errc::io, "udp: bad address " + cfg.host);
    rx_.resize(std::max<size_t>(cfg.size, 64));
    fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return fail(Errc::io, errno_text("udp socket"));
    rcvbuf_ = set_buffer(fd_, SO_RCVBUF, kWantBuffer);
    sndbuf_ = set_buffer(fd_, SO_SNDBUF, kWantBuffer);
    const int rc = cfg.role == Role::sub ? bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a)
                                         : connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    if (rc != 0) return fail(Errc::io, errno_text(cfg.role == Role::sub ? "udp bind" : "udp connect"));
    role_ = cfg.role;
    port_ = local_port(fd_);
    if (role_ == Role::sub) {
      // The wake-up socket sends to our own address, from a port we know.
      self_ = a;
      self_.sin_port = htons(port_);
      wake_fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
      sockaddr_in w = a;
      w.sin_port = 0;
      if (wake_fd_ < 0 || bind(wake_fd_, reinterpret_cast<sockaddr*>(&w), sizeof w) != 0)
        return fail(Errc::io, errno_text("udp wake-up socket"));
      wake_port_ = htons(local_port(wake_fd_));
    }
    return Errc::ok;
  }
  uint16_t bound_port() const override { return port_; }
  Errc wait_matched(int64_t) override { return Errc::ok; }  // connectionless

  Errc send(const uint8_t* data, size_t len) override {
    for (;;) {
      const ssize_t n = role_ == Role::pub
                            ? ::send(fd_, data, len, 0)
                            : ::sendto(fd_, data, len, 0, reinterpret_cast<sockaddr*>(&peer_), sizeof peer_);
      if (n == ssize_t(len)) return Errc::ok;
      if (n < 0 && errno == EINTR) continue;
      if (role_ == Role::sub && !have_peer_) return fail(Errc::io, "udp: no peer to echo to yet");
      return fail(Errc::io, errno_text("udp send"));
    }
  }

  Errc recv(const uint8_t** data, size_t* len, int64_t timeout_ns) override {
    int flags = MSG_TRUNC;
    if (timeout_ns == 0) {
      flags |= MSG_DONTWAIT;
    } else if (!timeout_.apply(fd_, timeout_ns)) {
      return fail(Errc::io, errno_text("udp SO_RCVTIMEO"));
    }
    timed_ = timed_ || timeout_ns > 0;
    ssize_t n;
    if (role_ == Role::sub) {
      sockaddr_in src;
      socklen_t sl = sizeof src;
      n = ::recvfrom(fd_, rx_.data(), rx_.size(), flags, reinterpret_cast<sockaddr*>(&src), &sl);
      if (n == 1 && src.sin_port == wake_port_ && src.sin_addr.s_addr == self_.sin_addr.s_addr) return Errc::timeout;
      if (n >= 0 && (!have_peer_ || src.sin_port != peer_.sin_port || src.sin_addr.s_addr != peer_.sin_addr.s_addr)) {
        peer_ = src;
        have_peer_ = true;
      }
    } else {
      if (timeout_ns < 0) waker_.enter();
      n = ::recv(fd_, rx_.data(), rx_.size(), flags);
      if (timeout_ns < 0) waker_.leave();
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return Errc::timeout;
      if (errno == ECONNREFUSED) return fail(Errc::closed, "udp: peer port unreachable");
      return fail(Errc::io, errno_text("udp recv"));
    }
    if (size_t(n) > rx_.size()) return fail(Errc::too_big, "udp: datagram larger than the test point's size");
    *data = rx_.data();
    *len = size_t(n);
    return Errc::ok;
  }

  bool can_wake() const override { return true; }
  void wake() override {
    if (role_ == Role::sub) {
      const uint8_t b = 0;
      ::sendto(wake_fd_, &b, 1, MSG_DONTWAIT, reinterpret_cast<const sockaddr*>(&self_), sizeof self_);
    } else {
      waker_.wake();
    }
  }

  void close() override {
    if (fd_ >= 0) ::close(fd_);
    if (wake_fd_ >= 0) ::close(wake_fd_);
    fd_ = wake_fd_ = -1;
  }

 private:
  int fd_ = -1, wake_fd_ = -1;
  Role role_ = Role::pub;
  uint16_t port_ = 0, wake_port_ = 0;
  int rcvbuf_ = 0, sndbuf_ = 0;
  bool timed_ = false, have_peer_ = false;
  sockaddr_in peer_{}, self_{};
  std::vector<uint8_t> rx_;
  RecvTimeout timeout_;
  ThreadWaker waker_;
};

}  // namespace

std::unique_ptr<Adapter> make_udp_adapter() { return std::make_unique<UdpAdapter>(); }

}  // namespace mwperf
