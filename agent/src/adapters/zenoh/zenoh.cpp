// zenoh 1.x through the Rust shim (../shim; the `zenoh` crate, rust/ here; zenoh-c is not on
// crates.io). Peer mode, multicast and gossip scouting off: the subscriber
// listens on tcp/<its address>:<port>, the publisher connects there, nothing
// else. Reliability and congestion control (block / drop) are zenoh's own;
// write batching is zenoh's non-express mode (off unless --batch: express).
// The shm transport is zenoh's shared memory (both sides on one host).
// Receiving: `listener` (default) runs the core's handler in zenoh's
// subscriber callback, on its receive task; `waitset` pulls from a channel
// the callback fills.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "adapters/shim/shim_adapter.h"
#include "adapters/zenoh/zenoh_discovery.h"
#include "util/socket_util.h"

namespace mwperf {
namespace {

constexpr size_t kMaxSize = 16u << 20;
constexpr uint32_t kQueue = 1024;  // the pull channel between zenoh's callback and the agent

Description describe() {
  Description d;
  d.max_size = kMaxSize;
  d.size_note =
      "mwperf's cap, not zenoh's (it fragments a payload of any size): the reference sweep's largest message; the "
      "shared-memory pools are sized from it (4x and 8x)";
  d.transports = (mws_features() & MWS_FEATURE_ZENOH_SHM) ? "tcp,shm" : "tcp";
  d.transport = "tcp";
  d.reliabilities = "reliable,best-effort";
  d.reliability = "reliable";
  d.honours = "batch,congestion";
  d.leftovers = "/dev/shm/*.zenoh";
  d.receives = "listener,waitset";
  d.receive = "listener";
  d.writable_data = d.concurrent_recv = false;
  d.discoveries = kDiscoveryProfiles;  // zenoh_discovery.cpp: unicast (peers, a mesh), default, tuned (a router)
  d.notes = "raw bytes as the payload of a put on key mwperf/<run>/data; express (no batching) unless --batch";
  return d;
}

// A port the subscriber's zenoh can listen on (taken from the kernel, then let go).
uint16_t free_port(const std::string& host) {
  sockaddr_in a;
  if (!make_addr(host, 0, &a)) return 0;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  uint16_t port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) port = local_port(fd);
  ::close(fd);
  return port;
}

class ZenohAdapter final : public ShimAdapter {
 public:
  const Description& description() const override {
    static const Description d = describe();
    return d;
  }
  std::string version() const override { return mws_version(MWS_MW_ZENOH); }
  uint16_t bound_port() const override { return port_; }
  std::unique_ptr<DiscoveryParticipant> make_participant() const override { return make_zenoh_participant(); }

  Errc open(const AdapterConfig& cfg) override {
    transport_ = cfg.transport.empty() ? "tcp" : cfg.transport;
    reliability_ = cfg.reliability.empty() ? "reliable" : cfg.reliability;
    receive_ = cfg.receive.empty() ? "listener" : cfg.receive;
    const std::string congestion = cfg.congestion.empty() ? "block" : cfg.congestion;
    port_ = cfg.role == Role::sub && cfg.port == 0 ? free_port(cfg.host) : cfg.port;  // a sub's --port 0: pick one
    if (port_ == 0)
      return fail(Errc::unsupported, cfg.role == Role::sub
                                         ? "zenoh: no free port on " + cfg.host
                                         : std::string("zenoh: --port missing (the port the subscriber reported)"));
    // The publisher connects to every subscriber (fan-out: each listens on a port of its own).
    std::string endpoint = "tcp/" + cfg.host + ":" + std::to_string(port_);
    if (cfg.role == Role::pub)
      for (size_t i = 1; i < cfg.ports.size(); ++i) endpoint += ",tcp/" + cfg.host + ":" + std::to_string(cfg.ports[i]);
    mws_config c{};
    c.middleware = MWS_MW_ZENOH;
    c.role = cfg.role == Role::pub ? MWS_ROLE_PUB : MWS_ROLE_SUB;
    c.reliable = reliability_ == "reliable";
    c.congestion = congestion == "drop" ? MWS_CC_DROP : MWS_CC_BLOCK;
    c.transport = transport_ == "shm" ? MWS_TRANSPORT_SHM : MWS_TRANSPORT_TCP;
    c.wait_mode = cfg.wait == WaitMode::spin ? MWS_WAIT_SPIN : MWS_WAIT_BLOCK;
    c.express = !cfg.batch;
    c.send_mode = MWS_SEND_COPY;  // put() of the bytes, as a zenoh user writes it
    c.run_id = cfg.run_id;
    c.max_size = cfg.size;
    c.queue_depth = kQueue;
    c.subscribers = cfg.fan_out;
    (cfg.role == Role::sub ? c.listen : c.connect) = endpoint.c_str();
    JsonObject j;
    j.str("mode", "peer")
        .str("scouting", "off (multicast, gossip)")
        .str(cfg.role == Role::sub ? "listen" : "connect", endpoint);
    j.str("transport", transport_).str("reliability", reliability_).str("congestion", congestion);
    j.boolean("batch", cfg.batch).str("receive", receive_).str("key", "mwperf/" + std::to_string(cfg.run_id));
    return open_shim("zenoh", c, j);
  }

 private:
  uint16_t port_ = 0;
};

}  // namespace

std::unique_ptr<Adapter> make_zenoh_adapter() { return std::make_unique<ZenohAdapter>(); }

}  // namespace mwperf
