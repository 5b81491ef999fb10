// The narrow interface every middleware adapter implements, shaped after RTI
// Perftest's MessagingIF reduced to what the core needs: an adapter moves
// opaque byte messages and nothing else. It never reads a clock for a
// measurement, never looks at sequence numbers and never counts a loss: that
// is the core's work.
//
// Each role has one outbound and one inbound stream:
//   publisher:  send() -> data stream to the subscriber; receive <- echo stream
//   subscriber: receive <- data stream;                  send() -> echo stream
// Messages come in one of two ways, as the run asks (--receive):
//   pull:   recv() on the agent's own thread (a waitset, a socket read, polling);
//   listen: the middleware's own thread calls Receiver::on_message (a DDS
//           listener): the core's handler runs right there, no thread hop.
// send() may run on one thread while a listener runs on another, and while
// recv() does unless the description says otherwise (concurrent_recv).
// Errors are values; nothing throws and nothing allocates per message.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/discovery.h"
#include "core/option_table.h"
#include "util/errors.h"

namespace mwperf {

enum class Role { pub, sub };
enum class WaitMode { block, spin };

// What an adapter can honour: its named capabilities, which the option table's
// rows refer to (core/option_table.h), its limits and defaults, as `list`
// publishes them and the controller validates against (nothing of it is
// copied elsewhere). Lists are comma-separated; the first entry of a list is
// not the default unless it is also named as the default.
struct Description {
  size_t max_size = 0;             // largest message (header included)
  const char* size_note = "";      // whose limit max_size is and why (the middleware's, or mwperf's own cap)
  const char* transports = "";     // selectable with --transport
  const char* transport = "";      // in force when none is chosen
  const char* reliabilities = "";  // "reliable,best-effort"
  const char* reliability = "";    // default
  // The capabilities that take no list: "history,durability,keyed,async,batch,congestion,nic".
  const char* honours = "";
  const char* receives = "";     // "listener,waitset"; "" = the adapter's one way (e.g. a socket read)
  const char* receive = "";      // default
  bool spin = true;              // --wait spin (polls recv without blocking)
  bool multi_host = true;        // false: shared memory only, one host (no --link / --hosts)
  uint32_t max_subscribers = 0;  // readers one publisher can serve at once; 0: no limit
  // Adapter instances (--subscribers-as threads) one process can hold at
  // once; 0: no limit of its own (1: its middleware is one per process, e.g. a node).
  uint32_t max_readers_per_process = 0;
  const char* readers_note = "";  // why, when limited (one line)
  // What recv() / on_message deliver is the adapter's own memory, which the
  // core may change in place (an echo turns a ping into a pong there); false:
  // read-only (another process's shared memory, the middleware's buffers).
  bool writable_data = true;
  // recv() may run on one thread while send() runs on another.
  bool concurrent_recv = true;
  // One publisher's samples reach a reader in the order sent, and what is lost
  // is lost before a later sample arrives (one TCP stream; queues that drop
  // their oldest): once the newest sample sent is here, nothing else will come,
  // and the drain after the stop ends then instead of after its quiet time.
  bool in_order = false;
  // With no --transport between two hosts: the transport to use when the
  // default does not cross hosts (shared memory), "" when it does.
  const char* remote_transport = "";
  // What the middleware may leave behind after a crash: comma-separated glob
  // patterns of absolute paths: files of /dev/shm, removed when no process
  // has them open or mapped; files or folders elsewhere (/tmp), removed when
  // no agent runs. What globs cannot name (System V objects) is its registry entry's clean (plugins/registry.h).
  const char* leftovers = "";
  const char* service = "";         // a process the controller runs for the point (e.g. "roudi"), "" none
  const char* service_config = "";  // its configuration file, next to the agent executable ("" none)
  // DDS Security (--security): the levels it applies (core/security.h's
  // kSecurityLevels; "" none), and in one line where it applies them, or why
  // it cannot (the refusal of --security, this adapter's own).
  const char* securities = "";
  const char* security_note = "";
  // Discovery points (`discover`, core/discovery.h): the profiles its participant has ("" none:
  // make_participant() is null), or why it has none.
  const char* discoveries = "";
  const char* discovery_note =
      "no discovery participant in this agent (cyclonedds, cyclonedds11, fastdds, iceoryx, ros1 and zenoh have one)";
  const char* notes = "";    // one line for `list` (e.g. what a payload adds on the wire)
  const char* license = "";  // the terms the middleware runs under here, where they are not open source

  // Capability `name` of an option row: nullptr when the adapter lacks it,
  // else the values it takes ("" = any the option takes).
  const char* capability(const std::string& name) const;
  // The adapter's default for capability `name` ("" none: the option's).
  const char* default_of(const std::string& name) const;
  // Why this adapter lacks capability `name`, in its own words ("" none: the option row's refusal).
  const char* refusal_of(const std::string& name) const;
  // Limit `name` of a LimitRule (0: none), and why it is what it is ("" none).
  uint64_t limit(const std::string& name) const;
  const char* limit_note(const std::string& name) const;
};

// QoS and transport choices. Empty strings / zero mean "the adapter's default".
struct AdapterConfig {
  Role role = Role::pub;
  std::string host = "127.0.0.1";  // subscriber's address (pub) / bind address (sub)
  uint16_t port = 0;               // 0 on the sub: choose one and report bound_port()
  std::vector<uint16_t> ports;     // pub: every subscriber's port (fan-out over endpoints); port is ports[0]
  size_t size = 0;                 // message size of this test point, bytes
  WaitMode wait = WaitMode::block;
  uint32_t run_id = 0;      // distinguishes topics of concurrent runs
  std::string reliability;  // "reliable" | "best-effort"
  // The option table's default until set: keep-last depth, or keep-all.
  int history_depth = int(option_default("history").u);
  bool keep_all = option_default("history").u == 0;
  std::string durability;          // "volatile" | "transient-local"
  uint32_t instances = 0;          // 0: unkeyed; N: keyed, writes round-robin over N instances
  bool async = false;              // asynchronous publishing
  bool batch = false;              // write batching: samples share a packet until flush() or it is full
  std::string congestion;          // "block" | "drop" ("" = the adapter's default)
  uint64_t whc_high = 0;           // bytes a writer's history cache may hold unacknowledged; 0 = the middleware's own
  std::string receive;             // one of Description::receives ("" = its default)
  std::string transport;           // one of Description::transports ("" = its default)
  std::string nic;                 // interface for the traffic ("lo" on one host)
  std::string peer = "127.0.0.1";  // the other side's address, for unicast discovery
  bool isolated = false;           // a namespace whose only ways out are lo and the link
  uint32_t domain = 0;
  std::string security;      // --security: none, auth, sign or encrypt ("" = none)
  std::string enclave;       // --enclave: the folder of its certificates, key and signed documents (core/security.h)
  uint32_t subscribers = 1;  // pub: the subscribers wait_matched() waits for
  uint32_t fan_out = 1;      // both roles: the subscribers the data stream serves (iceoryx2 sizes its services by it)
};

// What the middleware's thread calls in listen mode. `data` is valid only
// during the call (writable if the description says writable_data).
class Receiver {
 public:
  virtual void on_message(const uint8_t* data, size_t len) = 0;

 protected:
  ~Receiver() = default;
};

// How long a reliable publisher's close() waits for its readers'
// acknowledgments at most (the subscriber's own drain after the stop).
constexpr int64_t kLingerNs = 4'000'000'000;
// How long this endpoint lingers at close: kLingerNs for a reliable publisher, else 0.
inline int64_t linger_ns(Role role, const std::string& reliability_in_use) {
  return role == Role::pub && reliability_in_use == "reliable" ? kLingerNs : 0;
}

class Adapter {
 public:
  virtual ~Adapter() = default;
  virtual const Description& description() const = 0;
  virtual std::string version() const = 0;
  // Effective configuration actually in force, as a JSON object text.
  virtual std::string effective_config() const = 0;

  // Creates the endpoints. The sub binds/listens and reports bound_port().
  virtual Errc open(const AdapterConfig& cfg) = 0;
  virtual uint16_t bound_port() const { return 0; }
  // Waits until the peer is reachable (accept, discovery match...); a
  // publisher until cfg.subscribers subscribers are.
  virtual Errc wait_matched(int64_t timeout_ns) = 0;

  // Errc::timeout: the middleware did not take the message within its own
  // blocking time (a reliable writer whose history is full); nothing was sent.
  virtual Errc send(const uint8_t* data, size_t len) = 0;
  // Zero-copy sending, where the middleware lends the memory a message goes
  // out in (a chunk of its shared memory, the buffer its put() takes over):
  // loan() hands out a writable buffer of len bytes holding `from`'s bytes,
  // copied there by the middleware's own loan path (the copy any writer into
  // a loan pays; none where it can reply from the received sample itself);
  // the caller may change it in place, then publish_loaned() sends it. One
  // loan at a time, on the thread that sends; every loan is published. The
  // echo answers this way where can_loan() says so, instead of staging a
  // copy of its own for send().
  virtual bool can_loan() const { return false; }
  virtual Errc loan(const uint8_t* from, size_t len, uint8_t** out) {
    (void)from, (void)len, (void)out;
    return fail(Errc::unsupported, "no loans");
  }
  virtual Errc publish_loaned(uint8_t* buf, size_t len) {
    (void)buf, (void)len;
    return fail(Errc::unsupported, "no loans");
  }
  // Pull: the next message into *data / *len, valid until the next recv()
  // (writable if the description says writable_data). timeout_ns == 0 polls
  // once; < 0 (only when can_wake()) waits until a message arrives or wake()
  // is called (then Errc::timeout).
  virtual Errc recv(const uint8_t** data, size_t* len, int64_t timeout_ns) = 0;
  // Listen: from now until close(), the middleware's own thread calls
  // r->on_message for every message (only adapters whose receives list
  // "listener"; the core calls nothing else that receives).
  virtual Errc listen(Receiver* r) {
    (void)r;
    return fail(Errc::unsupported, "no listener delivery");
  }
  // Ends the endpoints. A reliable publisher first waits (up to kLingerNs)
  // until its readers have acknowledged what it sent: what was written is
  // delivered, not lost to the instrument's own shutdown.
  virtual void close() = 0;
  // With write batching: send what is batched now (after a sample that must
  // not wait: a ping, an echo, every rate-mode sample).
  virtual void flush() {}
  // An untimed wait arms no timer (on a VM each armed timer costs latency).
  // Adapters that can be woken from another thread say so; wake() makes a
  // blocked recv() return (thread-safe, may come before the wait).
  virtual bool can_wake() const { return false; }
  virtual void wake() {}
  // Samples the middleware rejected on this side (resource limits), or -1
  // where it has no such notion. Read once, after the measured phase.
  virtual int64_t rejected() const { return -1; }
  // The data path each direction took, as the middleware tells it (JSON
  // object: "send" / "receive" each shm, loan, copy, shm+copy or none, with
  // the counts read from the middleware), "null" where it cannot tell. Read
  // after the measured phase.
  virtual std::string data_path() const { return "null"; }
  // Every middleware library in use and its version, as a JSON object (e.g.
  // {"rcl":"9.2.8","rmw_fastrtps_cpp":"8.4.3","fastdds":"2.14.5"}); {} for none.
  virtual std::string versions() const { return "{}"; }
  // One participant of this middleware for `discover` (core/discovery.h),
  // nullptr where the adapter has no discovery mode.
  virtual std::unique_ptr<DiscoveryParticipant> make_participant() const { return nullptr; }

  const std::string& last_error() const { return error_; }
  // What is actually in force after open(): the record states these.
  const std::string& transport_in_use() const { return transport_; }
  const std::string& reliability_in_use() const { return reliability_; }
  const std::string& receive_in_use() const { return receive_; }

 protected:
  Errc fail(Errc e, std::string msg) {
    error_ = std::move(msg);
    return e;
  }
  std::string error_;
  std::string transport_, reliability_, receive_;
};

}  // namespace mwperf
