// Raw UDPv4 unicast: the floor every middleware is compared with.
// pub: one connected socket (data out, echoes in). sub: one bound socket; echoes
// go back to the sender of the last datagram received.
#include <fcntl.h>
#include <unistd.h>

#include "adapters/adapter.h"
#include "adapters/socket_util.h"

namespace mwperf {
namespace {

constexpr size_t kUdpMax = 65507;  // 65535 - 8 (UDP) - 20 (IPv4)
constexpr int kWantBuffer = 4 << 20;

class UdpAdapter final : public Adapter {
 public:
  ~UdpAdapter() override { close(); }
  const char* name() const override { return "udp"; }
  Capabilities caps() const override {
    Capabilities c{kUdpMax, "udp", "best-effort"};
    c.best_effort = true;
    c.transports = "udp";
    return c;
  }
  std::string version() const override { return kernel_version(); }
  std::string effective_config() const override {
    return "{\"so_rcvbuf\":" + std::to_string(rcvbuf_) + ",\"so_sndbuf\":" + std::to_string(sndbuf_) +
           "}";
  }

  Errc open(const AdapterConfig& cfg) override {
    transport_ = "udp";
    reliability_ = "best-effort";
    if (cfg.size > kUdpMax)
      return fail(Errc::unsupported, "udp: size " + std::to_string(cfg.size) +
                                         " exceeds UDP's maximum payload of 65507 bytes");
    if (cfg.role == Role::pub && cfg.port == 0)
      return fail(Errc::unsupported, "udp: --port missing (the port the subscriber reported)");
    sockaddr_in a;
    if (!make_addr(cfg.host, cfg.port, &a)) return fail(Errc::io, "udp: bad address " + cfg.host);
    fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return fail(Errc::io, errno_text("udp socket"));
    rcvbuf_ = set_buffer(fd_, SO_RCVBUF, kWantBuffer);
    sndbuf_ = set_buffer(fd_, SO_SNDBUF, kWantBuffer);
    const int rc = cfg.role == Role::sub ? bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a)
                                         : connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    if (rc != 0) return fail(Errc::io, errno_text(cfg.role == Role::sub ? "udp bind" : "udp connect"));
    role_ = cfg.role;
    port_ = local_port(fd_);
    return Errc::ok;
  }
  uint16_t bound_port() const override { return port_; }
  Errc wait_matched(int64_t) override { return Errc::ok; }  // connectionless

  Errc send(const uint8_t* data, size_t len) override {
    ssize_t n;
    if (role_ == Role::pub) {
      n = ::send(fd_, data, len, 0);
    } else {
      if (peer_len_ == 0) return fail(Errc::io, "udp: no peer to echo to yet");
      n = ::sendto(fd_, data, len, 0, reinterpret_cast<sockaddr*>(&peer_), peer_len_);
    }
    if (n == ssize_t(len)) return Errc::ok;
    return fail(Errc::io, errno_text("udp send"));
  }

  Errc recv(uint8_t* buf, size_t cap, int64_t timeout_ns, size_t* len) override {
    int flags = MSG_TRUNC;
    if (timeout_ns == 0) {
      flags |= MSG_DONTWAIT;
    } else if (!timeout_.apply(fd_, timeout_ns)) {
      return fail(Errc::io, errno_text("udp SO_RCVTIMEO"));
    }
    ssize_t n;
    if (role_ == Role::sub) {
      sockaddr_in src;
      socklen_t sl = sizeof src;
      n = ::recvfrom(fd_, buf, cap, flags, reinterpret_cast<sockaddr*>(&src), &sl);
      if (n >= 0) {
        peer_ = src;
        peer_len_ = sl;
      }
    } else {
      n = ::recv(fd_, buf, cap, flags);
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return Errc::timeout;
      if (errno == ECONNREFUSED) return fail(Errc::closed, "udp: peer port unreachable");
      return fail(Errc::io, errno_text("udp recv"));
    }
    if (size_t(n) > cap) return fail(Errc::too_big, "udp: datagram larger than the buffer");
    *len = size_t(n);
    return Errc::ok;
  }

  void close() override {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  Role role_ = Role::pub;
  uint16_t port_ = 0;
  int rcvbuf_ = 0, sndbuf_ = 0;
  sockaddr_in peer_{};
  socklen_t peer_len_ = 0;
  RecvTimeout timeout_;
};

}  // namespace

std::unique_ptr<Adapter> make_udp_adapter() { return std::make_unique<UdpAdapter>(); }

}  // namespace mwperf
