// The narrow interface every middleware adapter implements. Shaped after RTI
// Perftest's MessagingIF (writer, reader, capability queries), reduced to what
// the core needs: an adapter moves opaque byte messages and nothing else. It never
// reads a clock for a measurement, never looks at sequence numbers and never
// counts a loss: that is the core's work (src/core).
//
// Each role has one outbound and one inbound stream:
//   publisher:  send() -> data stream to the subscriber; recv() <- echo stream
//   subscriber: recv() <- data stream;                   send() -> echo stream
// Errors are values: send()/recv() return an Errc and keep the detail in
// last_error(); nothing throws and nothing allocates on the hot path.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace mwperf {

enum class Role { pub, sub };
enum class WaitMode { block, spin };

enum class Errc {
  ok,
  timeout,      // nothing arrived within the timeout (or would block, timeout 0)
  closed,       // the peer closed the stream (stream transports)
  too_big,      // a message larger than the caller's buffer was dropped
  unsupported,  // an option or size the middleware cannot honour
  io,           // any other failure; see last_error()
};
const char* to_string(Errc e);

struct AdapterConfig {
  Role role = Role::pub;
  std::string host = "127.0.0.1";  // subscriber's address (pub) / bind address (sub)
  uint16_t port = 0;               // 0 on the sub: choose one and report bound_port()
  size_t size = 0;                 // message size of this test point, bytes
  WaitMode wait = WaitMode::block;
};

struct Capabilities {
  size_t max_size;          // largest message the adapter carries
  const char* transport;    // e.g. "udp", "tcp"
  const char* reliability;  // "best-effort" or "reliable"
};

class Adapter {
 public:
  virtual ~Adapter() = default;
  virtual const char* name() const = 0;
  virtual Capabilities caps() const = 0;
  virtual std::string version() const = 0;
  // Effective configuration actually in force, as a JSON object text.
  virtual std::string effective_config() const = 0;

  // Creates the endpoints. The sub binds/listens and reports bound_port().
  virtual Errc open(const AdapterConfig& cfg) = 0;
  virtual uint16_t bound_port() const { return 0; }
  // Waits until the peer is reachable (accept, discovery match...).
  virtual Errc wait_matched(int64_t timeout_ns) = 0;

  virtual Errc send(const uint8_t* data, size_t len) = 0;
  // Receives one message into buf. timeout_ns == 0 polls once without blocking.
  // On success *len is the message length.
  virtual Errc recv(uint8_t* buf, size_t cap, int64_t timeout_ns, size_t* len) = 0;
  virtual void close() = 0;

  const std::string& last_error() const { return error_; }

 protected:
  Errc fail(Errc e, std::string msg) {
    error_ = std::move(msg);
    return e;
  }
  std::string error_;
};

struct AdapterEntry {
  const char* name;
  std::unique_ptr<Adapter> (*make)();
};

// The one table of built adapters (src/adapters/registry.cpp).
const AdapterEntry* adapters_begin();
const AdapterEntry* adapters_end();
std::unique_ptr<Adapter> make_adapter(const std::string& name);

}  // namespace mwperf
