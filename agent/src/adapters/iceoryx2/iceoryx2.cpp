// iceoryx2 0.10 through the Rust shim (../shim; the `iceoryx2` crate, rust/ here): zero-copy
// publish-subscribe in shared memory on one host, no daemon. Each run is an
// iceoryx2 domain of its own (/dev/shm/mwp<run>_*, /tmp/mwperf-iceoryx2/),
// removed when the last node closes (and a killed run's, by the next run).
// Reliable: the publisher retries a full buffer for up to 100 ms, then the
// send counts as a timeout (as DDS's max_blocking_time); best effort: the
// subscriber's buffer overflows (the oldest goes). keep-last:N is that buffer.
// Receiving: `waitset` (default) on the agent's thread, blocking on iceoryx2's
// event (the peer notifies after each send) or, with --wait spin, polling;
// `listener` on a thread of the shim's.
#include "adapters/shim/shim_adapter.h"

namespace mwperf {
namespace {

constexpr size_t kMaxSize = 16u << 20;

Description describe() {
  Description d;
  d.max_size = kMaxSize;
  d.size_note =
      "mwperf's cap, not iceoryx2's: the publisher's slice (initial_max_slice_len) is sized from it, and its shared "
      "memory holds the subscriber's buffer plus two loans of it";
  d.transports = d.transport = "shm";
  d.reliabilities = "reliable,best-effort";
  d.reliability = "reliable";
  d.honours = "history";
  d.leftovers = "/dev/shm/mwp[0-9]*_*,/tmp/mwperf-iceoryx2";  // the shim names its services mwp<run>_, under that root
  d.receives = "waitset,listener";
  d.receive = "waitset";
  d.multi_host = false;
  d.max_subscribers = 0;  // iceoryx2's own limit is a service setting: sized to the point's fan-out
  d.writable_data = d.concurrent_recv = false;
  d.notes = "[u8] slices loaned from the publisher's shared memory; keep-last:N is the subscriber's buffer";
  return d;
}

class Iceoryx2Adapter final : public ShimAdapter {
 public:
  const Description& description() const override {
    static const Description d = describe();
    return d;
  }
  std::string version() const override { return mws_version(MWS_MW_ICEORYX2); }

  Errc open(const AdapterConfig& cfg) override {
    transport_ = "shm";
    reliability_ = cfg.reliability.empty() ? "reliable" : cfg.reliability;
    receive_ = cfg.receive.empty() ? "waitset" : cfg.receive;
    if (cfg.keep_all) return fail(Errc::unsupported, "iceoryx2: --history keep-all: a subscriber's buffer is bounded");
    const uint32_t depth = uint32_t(cfg.history_depth);
    mws_config c{};
    c.middleware = MWS_MW_ICEORYX2;
    c.role = cfg.role == Role::pub ? MWS_ROLE_PUB : MWS_ROLE_SUB;
    c.reliable = reliability_ == "reliable";
    c.congestion = c.reliable ? MWS_CC_BLOCK : MWS_CC_DROP;
    c.wait_mode = cfg.wait == WaitMode::spin ? MWS_WAIT_SPIN : MWS_WAIT_BLOCK;
    c.run_id = cfg.run_id;
    c.max_size = cfg.size;
    c.queue_depth = depth;
    c.subscribers = cfg.fan_out;
    JsonObject j;
    j.str("reliability", reliability_).str("history", "keep-last:" + std::to_string(depth));
    j.str("backpressure", c.reliable ? "retry-until-delivered" : "discard (safe overflow)");
    j.str("receive", receive_).str("wait", cfg.wait == WaitMode::spin ? "poll" : "event");
    return open_shim("iceoryx2", c, j);
  }
};

}  // namespace

std::unique_ptr<Adapter> make_iceoryx2_adapter() { return std::make_unique<Iceoryx2Adapter>(); }

}  // namespace mwperf
