// Raw TCP: a length-prefixed stream (4-byte little-endian length, then the
// message), up to 16 MiB per message. Nagle is off (TCP_NODELAY) on transport
// `tcp`, on with `tcp-nagle` (the base of ROS 1's default tcpros). Reads go
// through a 256 KiB buffer so that small messages cost one syscall per batch
// and are handed out where they lie; large bodies are read straight into the
// message buffer.
//
// The subscriber takes only its own publisher: the publisher's first 8 bytes
// on the connection are a hello ("MWPT" and the run id, which the agents get
// from their environment, not their command line); a connection that does
// not say it within a second is closed and counted, and the subscriber goes
// on waiting for its publisher.
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "core/adapter.h"
#include "util/clock.h"
#include "util/socket_util.h"

namespace mwperf {
namespace {

constexpr size_t kTcpMax = 16u << 20;
constexpr size_t kReadBuf = 256u << 10;
constexpr size_t kDirect = 64u << 10;  // read bodies this large straight into the message buffer
constexpr int kWantBuffer = 4 << 20;
constexpr int kSendTimeoutMs = 100;  // as a DDS writer's default max_blocking_time
// A message begun must be finished within this (the controller allows a send
// 2 s past the measured phase: Timeouts.blocked); if not, the stream is
// broken (a message cut in two breaks the framing): this send and every
// later one fail, and the point fails with the reason.
constexpr int64_t kMidMessageNs = 1'000'000'000;
constexpr uint32_t kHelloMagic = 0x5450574Du;  // "MWPT" in memory (little-endian): the publisher's hello
constexpr int kHelloWaitMs = 1000;

void hello_bytes(uint32_t run_id, uint8_t out[8]) {
  std::memcpy(out, &kHelloMagic, 4);
  std::memcpy(out + 4, &run_id, 4);
}

Description describe() {
  Description d;
  d.max_subscribers = 1;  // one unicast peer
  d.max_size = kTcpMax;
  d.size_note =
      "mwperf's framing cap: each message is read into one buffer of this size (its 4-byte length prefix could say 4 "
      "GiB)";
  d.transports = "tcp,tcp-nagle";
  d.transport = "tcp";
  d.reliabilities = d.reliability = "reliable";
  d.in_order = true;  // one stream
  d.notes = "4-byte length prefix per message; TCP_NODELAY on transport tcp, Nagle on with tcp-nagle";
  return d;
}

class TcpAdapter final : public Adapter {
 public:
  TcpAdapter() : rbuf_(kReadBuf) {}
  ~TcpAdapter() override { close(); }
  const Description& description() const override {
    static const Description d = describe();
    return d;
  }
  std::string version() const override { return kernel_version(); }
  std::string effective_config() const override {
    return std::string("{\"tcp_nodelay\":") + (nodelay_ ? "true" : "false") +
           ",\"framing\":\"u32 length prefix\",\"send_timeout_ms\":" + std::to_string(kSendTimeoutMs) +
           ",\"so_rcvbuf\":" + std::to_string(rcvbuf_) + ",\"so_sndbuf\":" + std::to_string(sndbuf_) +
           ",\"refused_connections\":" + std::to_string(refused_) + "}";
  }

  Errc open(const AdapterConfig& cfg) override {
    transport_ = cfg.transport.empty() ? "tcp" : cfg.transport;
    nodelay_ = transport_ != "tcp-nagle";
    reliability_ = "reliable";
    receive_ = "read";
    msg_.resize(std::max<size_t>(cfg.size, 64));
    if (cfg.size > kTcpMax)
      return fail(Errc::unsupported,
                  "tcp: size " + std::to_string(cfg.size) + " exceeds the 16 MiB (16777216 B) limit");
    if (cfg.role == Role::pub && cfg.port == 0)
      return fail(Errc::unsupported, "tcp: --port missing (the port the subscriber reported)");
    sockaddr_in a;
    if (!make_addr(cfg.host, cfg.port, &a)) return fail(Errc::io, "tcp: bad address " + cfg.host);
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return fail(Errc::io, errno_text("tcp socket"));
    if (cfg.role == Role::sub) {
      const int one = 1;
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 8) != 0) {
        ::close(fd);
        return fail(Errc::io, errno_text("tcp bind/listen"));
      }
      listen_fd_ = fd;
      port_ = local_port(fd);
      run_id_ = cfg.run_id;
      return Errc::ok;
    }
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ::close(fd);
      return fail(Errc::io, errno_text("tcp connect"));
    }
    uint8_t hello[8];
    hello_bytes(cfg.run_id, hello);
    if (::send(fd, hello, sizeof hello, MSG_NOSIGNAL) != ssize_t(sizeof hello)) {
      ::close(fd);
      return fail(Errc::io, errno_text("tcp hello"));
    }
    setup(fd);
    return Errc::ok;
  }
  uint16_t bound_port() const override { return port_; }

  Errc wait_matched(int64_t timeout_ns) override {
    if (fd_ >= 0) return Errc::ok;
    const int64_t deadline = now_ns() + timeout_ns;
    for (;;) {
      const int64_t left_ms = (deadline - now_ns()) / 1000000;
      if (left_ms <= 0) {
        return fail(Errc::timeout,
                    "tcp: no connection from the publisher" +
                        (refused_ ? " (refused " + std::to_string(refused_) + " other connection(s))" : std::string()));
      }
      pollfd p{listen_fd_, POLLIN, 0};
      const int r = poll(&p, 1, int(left_ms));
      if (r < 0 && errno != EINTR) return fail(Errc::io, errno_text("tcp poll"));
      if (r <= 0) continue;
      const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;  // gone before it was taken
      if (!says_hello(fd)) {
        ::close(fd);
        ++refused_;
        continue;
      }
      ::close(listen_fd_);
      listen_fd_ = -1;
      setup(fd);
      return Errc::ok;
    }
  }

  Errc send(const uint8_t* data, size_t len) override {
    uint32_t n32 = uint32_t(len);
    iovec iov[2] = {{&n32, sizeof n32}, {const_cast<uint8_t*>(data), len}};
    msghdr m{};
    m.msg_iov = iov;
    m.msg_iovlen = 2;
    const size_t total = sizeof n32 + len;
    size_t left = total;
    if (broken_) return fail(Errc::io, "tcp: the stream broke in the middle of a message (the peer stopped reading)");
    int64_t finish_by = 0;
    while (left > 0) {
      const ssize_t w = sendmsg(fd_, &m, MSG_NOSIGNAL);
      if (w < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
          // Nothing of this message went within the send timeout: not sent (as a
          // DDS writer's max_blocking_time). Once part of it is in the stream,
          // the rest must follow within kMidMessageNs, or the framing breaks.
          if (left == total) return fail(Errc::timeout, "tcp: the send buffer stayed full for 100 ms");
          if (finish_by == 0) finish_by = now_ns() + kMidMessageNs;
          if (now_ns() < finish_by) continue;
          broken_ = true;
          return fail(Errc::io, "tcp: the peer stopped reading in the middle of a message (1 s): the stream is broken");
        }
        if (errno == EPIPE || errno == ECONNRESET) return fail(Errc::closed, "tcp: peer closed");
        return fail(Errc::io, errno_text("tcp send"));
      }
      left -= size_t(w);
      size_t skip = size_t(w);  // advance the iovecs past what was written
      while (m.msg_iovlen > 0 && skip >= m.msg_iov[0].iov_len) {
        skip -= m.msg_iov[0].iov_len;
        ++m.msg_iov;
        --m.msg_iovlen;
      }
      if (m.msg_iovlen > 0) {
        m.msg_iov[0].iov_base = static_cast<uint8_t*>(m.msg_iov[0].iov_base) + skip;
        m.msg_iov[0].iov_len -= skip;
      }
    }
    return Errc::ok;
  }

  Errc recv(const uint8_t** data, size_t* len, int64_t timeout_ns) override {
    if (fd_ < 0) return fail(Errc::closed, "tcp: not connected");
    const int flags = timeout_ns == 0 ? MSG_DONTWAIT : 0;
    if (timeout_ns != 0 && !timeout_.apply(fd_, timeout_ns)) return fail(Errc::io, errno_text("tcp SO_RCVTIMEO"));
    for (;;) {
      if (!have_len_) {
        if (rend_ - rstart_ < 4) {
          const Errc e = fill(flags);
          if (e != Errc::ok) return e;
          continue;
        }
        uint32_t n32;
        std::memcpy(&n32, rbuf_.data() + rstart_, 4);
        rstart_ += 4;
        if (n32 > kTcpMax) return fail(Errc::io, "tcp: frame of " + std::to_string(n32) + " bytes, stream corrupt");
        have_len_ = true;
        body_len_ = n32;
        body_got_ = 0;
        discard_ = body_len_ > msg_.size();
      }
      if (body_got_ == 0 && !discard_ && rend_ - rstart_ >= body_len_) {  // whole in the read buffer
        *data = rbuf_.data() + rstart_;
        *len = body_len_;
        rstart_ += body_len_;
        have_len_ = false;
        return Errc::ok;
      }
      const size_t take = std::min(rend_ - rstart_, body_len_ - body_got_);
      if (take > 0 && !discard_) std::memcpy(msg_.data() + body_got_, rbuf_.data() + rstart_, take);
      rstart_ += take;
      body_got_ += take;
      if (body_got_ == body_len_) {
        have_len_ = false;
        if (discard_) return fail(Errc::too_big, "tcp: message larger than the test point's size");
        *data = msg_.data();
        *len = body_len_;
        return Errc::ok;
      }
      const size_t remaining = body_len_ - body_got_;
      if (!discard_ && remaining >= kDirect) {
        const ssize_t n = ::recv(fd_, msg_.data() + body_got_, remaining, flags);
        if (n <= 0) return read_error(n);
        body_got_ += size_t(n);
        continue;
      }
      const Errc e = fill(flags);
      if (e != Errc::ok) return e;
    }
  }

  void close() override {
    if (fd_ >= 0) ::close(fd_);
    if (listen_fd_ >= 0) ::close(listen_fd_);
    fd_ = listen_fd_ = -1;
  }

 private:
  // The first 8 bytes within a second are the publisher's hello for this run.
  bool says_hello(int fd) const {
    uint8_t want[8], got[8];
    hello_bytes(run_id_, want);
    size_t have = 0;
    const int64_t deadline = now_ns() + int64_t(kHelloWaitMs) * 1000000;
    while (have < sizeof got) {
      const int64_t left_ms = (deadline - now_ns()) / 1000000;
      if (left_ms <= 0) return false;
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, int(left_ms)) <= 0) continue;
      const ssize_t n = ::recv(fd, got + have, sizeof got - have, MSG_DONTWAIT);
      if (n <= 0) {
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        return false;
      }
      have += size_t(n);
    }
    return std::memcmp(got, want, sizeof want) == 0;
  }

  void setup(int fd) {
    fd_ = fd;
    const int nodelay = nodelay_ ? 1 : 0;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &nodelay, sizeof nodelay);
    rcvbuf_ = set_buffer(fd_, SO_RCVBUF, kWantBuffer);
    sndbuf_ = set_buffer(fd_, SO_SNDBUF, kWantBuffer);
    timeval tv{0, kSendTimeoutMs * 1000};  // a full send buffer ends the send (Errc::timeout) instead of hanging
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  }

  Errc fill(int flags) {
    if (rstart_ == rend_) {
      rstart_ = rend_ = 0;
    } else if (rstart_ > 0) {
      std::memmove(rbuf_.data(), rbuf_.data() + rstart_, rend_ - rstart_);
      rend_ -= rstart_;
      rstart_ = 0;
    }
    const ssize_t n = ::recv(fd_, rbuf_.data() + rend_, rbuf_.size() - rend_, flags);
    if (n <= 0) return read_error(n);
    rend_ += size_t(n);
    return Errc::ok;
  }

  Errc read_error(ssize_t n) {
    if (n == 0) return fail(Errc::closed, "tcp: peer closed");
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return Errc::timeout;
    if (errno == ECONNRESET) return fail(Errc::closed, "tcp: connection reset");
    return fail(Errc::io, errno_text("tcp recv"));
  }

  int fd_ = -1, listen_fd_ = -1;
  uint16_t port_ = 0;
  uint32_t run_id_ = 0;
  uint64_t refused_ = 0;  // connections that were not this run's publisher
  int rcvbuf_ = 0, sndbuf_ = 0;
  bool nodelay_ = true;  // transport tcp; tcp-nagle leaves Nagle on
  RecvTimeout timeout_;
  std::vector<uint8_t> rbuf_, msg_;
  size_t rstart_ = 0, rend_ = 0;
  bool have_len_ = false, discard_ = false, broken_ = false;
  size_t body_len_ = 0, body_got_ = 0;
};

}  // namespace

std::unique_ptr<Adapter> make_tcp_adapter() { return std::make_unique<TcpAdapter>(); }

}  // namespace mwperf
