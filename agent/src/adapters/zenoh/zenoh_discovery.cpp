// zenoh's participant of a discovery point (core/discovery.h), through the Rust
// shim (mws_disc_*, rust/src/discovery.rs: one session, on each topic a
// publisher that puts the one sample, a queryable that serves it to late
// readers, a liveliness token for the writer; a subscriber and a liveliness
// subscriber for the reader). Profiles:
// - `unicast`: peer mode, multicast and gossip scouting off; participant i
//   listens on tcp/<its address>:<base + i> and connects to every participant
//   of a lower index (a full mesh of direct links, nothing else);
// - `default`: zenoh's own defaults (peer mode, multicast scouting on
//   224.0.0.224:7446 and gossip, listening on every address), the scouting
//   interface set to --nic: only on a namespace pair's link;
// - `tuned`: through a router: participant 0 opens its session in router mode
//   (in-process, no zenohd) listening on tcp/<--server>:<base>, every other
//   participant is a client connecting to it alone; no scouting.
// Every participant's address: on lo 127.0.0.1; on a namespace pair its nic's,
// for those of its own side (the controller alternates the participants between
// the sides: index parity), --peer for the others'. The ports come from the run
// id (base_port). Connecting retries every 50 ms at first (zenoh's 1 s would
// time the retry, not discovery: all participants open at once and a listener
// may not be up yet), and opening a
// session does not wait for its connections (zenoh's open would wait up to its
// scouting delay, 500 ms, for them; and the router sleeps that delay at start
// with scouting off too: 0 there): the core times the matches as zenoh
// reports them.
// Participants as threads of one process (o.hosted > 1) are allowed: zenoh's
// sessions share only its thread pools, each has its own routing tables and
// transports, so they reach each other over their TCP links as processes do.
// matched(): zenoh counts no matched writers per subscriber; it is the count of
// writer liveliness tokens zenoh's liveliness reports alive on the topics (T x N,
// the participant's own included).
#include "adapters/zenoh/zenoh_discovery.h"

#include <string>
#include <vector>

#include "mwperf_shim.h"
#include "util/json.h"
#include "util/socket_util.h"

namespace mwperf {
namespace {

// The run's ports: N consecutive ones from a base the run id picks in [20000, 32700), below the
// kernel's ephemeral ports (32768-60999), so that two runs at once rarely overlap.
constexpr uint32_t kFirstPort = 20000, kPorts = 12700;
constexpr const char* kRetry = "{period_init_ms:50,period_max_ms:1000,period_increase_factor:2}";

uint16_t base_port(uint32_t run_id, uint32_t participants) {
  return uint16_t(kFirstPort + run_id % (kPorts - participants));
}

std::string endpoint(const std::string& addr, uint32_t port) { return "tcp/" + addr + ":" + std::to_string(port); }

std::string json_list(const std::vector<std::string>& v) {
  std::string s = "[";
  for (const std::string& e : v) s += (s.size() > 1 ? ",\"" : "\"") + e + "\"";
  return s + "]";
}

class ZenohParticipant final : public DiscoveryParticipant {
 public:
  ~ZenohParticipant() override { close(); }

  Errc open(const DiscoveryOptions& o) override {
    if (o.profile == "default" && o.nic == "lo")
      return fail(Errc::unsupported,
                  "zenoh: --discovery default scouts over multicast: it runs on a namespace pair's link (--link "
                  "netns), not on lo");
    const std::string self = o.nic == "lo" ? "127.0.0.1" : interface_ipv4(o.nic);
    if (self.empty()) return fail(Errc::unsupported, "zenoh: --nic " + o.nic + " has no IPv4 address");
    const uint16_t base = base_port(o.run_id, o.participants);
    std::string kv;
    JsonObject j;
    auto set = [&kv](const std::string& k, const std::string& v) { kv += k + "=" + v + ";"; };
    if (o.profile == "unicast") {
      std::vector<std::string> connect;
      for (uint32_t p = 0; p < o.index; ++p)
        connect.push_back(endpoint(o.nic == "lo" || p % 2 == o.index % 2 ? self : o.peer, base + p));
      const std::string listen = endpoint(self, base + o.index);
      set("mode", "\"peer\"");
      set("scouting/multicast/enabled", "false");
      set("scouting/gossip/enabled", "false");
      set("listen/endpoints", json_list({listen}));
      set("connect/endpoints", json_list(connect));
      set("connect/retry", kRetry);
      set("open/return_conditions/connect_scouted", "false");
      j.str("mode", "peer").str("scouting", "off (multicast, gossip)").str("listen", listen);
      j.raw("connect", json_list(connect))
          .str("connect_retry_ms", "50, doubling to 1000")
          .str("open_waits_for_connections", "no");
    } else if (o.profile == "tuned") {
      const std::string router = endpoint(o.server, base);
      set("mode", o.index == 0 ? "\"router\"" : "\"client\"");
      set("scouting/multicast/enabled", "false");
      set("scouting/gossip/enabled", "false");
      set(o.index == 0 ? "listen/endpoints" : "connect/endpoints", json_list({router}));
      if (o.index != 0) set("connect/timeout_ms", std::to_string(o.timeout_ns / 1'000'000));
      if (o.index == 0) set("scouting/delay", "0");  // a router sleeps it at start, scouting or not
      set("connect/retry", kRetry);
      set("open/return_conditions/connect_scouted", "false");
      j.str("mode", o.index == 0 ? "router (in-process, this participant's session)" : "client");
      j.str("scouting", o.index == 0 ? "off (multicast, gossip), delay 0" : "off (multicast, gossip)");
      j.str("router", router);
      j.str("connect_retry_ms", "50, doubling to 1000").str("open_waits_for_connections", "no");
    } else {
      set("scouting/multicast/interface", "\"" + o.nic + "\"");
      j.str("mode", "peer (zenoh's default)")
          .str("scouting", "multicast 224.0.0.224:7446 and gossip (zenoh's defaults)");
      j.str("scouting_interface", o.nic).str("listen", "zenoh's default (tcp/[::]:0)");
    }
    j.str("matched", "writers' liveliness tokens alive (zenoh's liveliness)");
    j.str("first_sample", "put, and each writer's queryable asked once its token appears");
    const int32_t rc = mws_disc_open(kv.c_str(), o.run_id, o.topics, o.index, &d_);
    if (rc != MWS_OK) return fail(rc == MWS_UNSUPPORTED ? Errc::unsupported : Errc::io, mws_last_error());
    config_ = j.str("zenoh_config", kv).done();
    return Errc::ok;
  }

  uint64_t matched() override { return d_ == nullptr ? 0 : mws_disc_matched(d_); }

  void take(void (*seen)(void*, uint32_t, uint32_t), void* ctx) override {
    if (d_ != nullptr) mws_disc_take(d_, seen, ctx);
  }

  std::string config_json() const override { return config_; }
  std::string version() const override { return mws_version(MWS_MW_ZENOH); }
  void close() override {
    mws_disc_close(d_);
    d_ = nullptr;
  }

 private:
  mws_disc* d_ = nullptr;
  std::string config_;
};

}  // namespace

std::unique_ptr<DiscoveryParticipant> make_zenoh_participant() { return std::make_unique<ZenohParticipant>(); }

}  // namespace mwperf
