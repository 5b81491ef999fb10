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

// QoS and transport choices. Empty strings / zero mean "the adapter's default";
// an adapter refuses (Errc::unsupported) what it cannot honour, naming the option.
struct AdapterConfig {
  Role role = Role::pub;
  std::string host = "127.0.0.1";  // subscriber's address (pub) / bind address (sub)
  uint16_t port = 0;               // 0 on the sub: choose one and report bound_port()
  size_t size = 0;                 // message size of this test point, bytes
  WaitMode wait = WaitMode::block;
  uint32_t run_id = 0;             // distinguishes topics of concurrent runs
  std::string reliability;         // "reliable" | "best-effort"
  int history_depth = 0;           // keep-last depth; 0 = default (10)
  bool keep_all = false;
  std::string durability;          // "volatile" | "transient-local"
  uint32_t instances = 0;          // 0: unkeyed; N: keyed, writes round-robin over N instances
  bool async = false;              // asynchronous publishing
  bool batch = false;              // write batching: samples share a packet until flush() or it is full
  std::string receive;             // "waitset" | "listener"
  std::string transport;           // "udp" | "shm" | "" (the middleware's default)
  std::string nic;                 // interface for DDS traffic ("lo" on one host)
  std::string peer = "127.0.0.1";  // the other side's address, for unicast discovery
  bool isolated = false;           // a namespace whose only ways out are lo and the link: no whitelist needed
  uint32_t domain = 0;
};

// What an adapter can honour; the core refuses the rest before opening it.
struct Capabilities {
  size_t max_size;          // largest message the adapter carries
  const char* transport;    // default transport, e.g. "udp", "tcp"
  const char* reliability;  // default reliability: "best-effort" or "reliable"
  bool reliable = false, best_effort = false;
  bool history = false, durability = false, keyed = false, async = false, batching = false;
  bool listener = false, waitset = false;
  const char* transports = "";  // selectable with --transport, comma-separated
};

// "" when every option in cfg is within caps, else one line naming the option,
// its value and the middleware.
std::string unsupported_option(const char* mw, const Capabilities& caps, const AdapterConfig& cfg);

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
  // Receives one message into buf. timeout_ns == 0 polls once without blocking;
  // timeout_ns < 0 (only when can_wake()) waits until a message arrives or
  // wake() is called, and then returns Errc::timeout. On success *len is the
  // message length.
  virtual Errc recv(uint8_t* buf, size_t cap, int64_t timeout_ns, size_t* len) = 0;
  virtual void close() = 0;
  // With write batching: send what is batched now (the core calls it after a
  // sample that must not wait: a ping, an echo, every rate-mode sample).
  virtual void flush() {}
  // An untimed wait arms no timer: on a VM each armed timer costs a little
  // latency. Adapters that can be woken from another thread say so; wake()
  // makes a blocked recv() return (thread-safe, may come before the wait).
  virtual bool can_wake() const { return false; }
  virtual void wake() {}

  const std::string& last_error() const { return error_; }
  // What is actually in force after open(): the record states these.
  const std::string& transport_in_use() const { return transport_; }
  const std::string& reliability_in_use() const { return reliability_; }

 protected:
  Errc fail(Errc e, std::string msg) {
    error_ = std::move(msg);
    return e;
  }
  std::string error_;
  std::string transport_, reliability_;
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
