// iceoryx 2.0 (Debian: libiceoryx-posh-dev), zero-copy shared memory on one
// host, through the RouDi daemon the controller starts for the point (the
// description's service "roudi"). A message is loaned from the publisher's
// shared memory, the core's bytes copied in, and published; the subscriber
// takes the chunk where the publisher wrote it (no copy) and releases it at
// the next receive.
//
// Reliable: the publisher waits for a subscriber whose queue is full
// (WAIT_FOR_CONSUMER + BLOCK_PRODUCER); best effort: the oldest sample goes.
// keep-last:N is the subscriber's queue (at most 256 in iceoryx 2.0);
// transient-local is the publisher's history (at most 16).
// Receiving: `waitset` (default) on the agent's thread with a user trigger to
// wake it, `listener` on iceoryx's listener thread, --wait spin polls take().
#include "iceoryx_hoofs/log/logmanager.hpp"
#include "iceoryx_posh/mepoo/chunk_header.hpp"
#include "iceoryx_posh/popo/listener.hpp"
#include "iceoryx_posh/popo/untyped_publisher.hpp"
#include "iceoryx_posh/popo/untyped_subscriber.hpp"
#include "iceoryx_posh/popo/user_trigger.hpp"
#include "iceoryx_posh/popo/wait_set.hpp"
#include "iceoryx_posh/runtime/posh_runtime.hpp"
#include "iceoryx_versions.hpp"

#include <chrono>
#include <cstring>
#include <optional>
#include <thread>

#include "core/adapter.h"
#include "util/json.h"
#include "util/serial_drain.h"

namespace mwperf {
namespace {

// The largest chunk of the RouDi configuration the controller starts (its
// 16 MiB pool); a loan above it would abort the process.
constexpr size_t kMaxSize = 16u << 20;
constexpr uint64_t kMaxQueue = 256, kMaxHistory = 16;

Description describe() {
  Description d;
  d.max_size = kMaxSize;
  d.transports = d.transport = "shm";
  d.reliabilities = "reliable,best-effort";
  d.reliability = "reliable";
  d.honours = "history,durability";
  d.receives = "waitset,listener";
  d.receive = "waitset";
  d.multi_host = false;
  d.service = "roudi";
  d.service_config = "roudi.toml";  // configure_file()d next to the agent
  d.notes = "zero-copy chunks of a RouDi-managed shared memory; queue depth at most 256, history at most 16";
  return d;
}

iox::capro::ServiceDescription service(const char* event, uint32_t run_id) {
  auto id = [](const std::string& s) { return iox::capro::IdString_t(iox::cxx::TruncateToCapacity, s); };
  return iox::capro::ServiceDescription{id("mwperf"), id(event), id(std::to_string(run_id))};
}

class IceoryxAdapter final : public Adapter {
 public:
  ~IceoryxAdapter() override { close(); }
  const Description& description() const override {
    static const Description d = describe();
    return d;
  }
  std::string version() const override { return ICEORYX_LATEST_RELEASE_VERSION; }
  std::string effective_config() const override { return config_json_; }

  Errc open(const AdapterConfig& cfg) override {
    transport_ = "shm";
    reliability_ = cfg.reliability.empty() ? "reliable" : cfg.reliability;
    receive_ = cfg.receive.empty() ? "waitset" : cfg.receive;
    if (cfg.size > kMaxSize) return fail(Errc::unsupported, "iceoryx: size above the 16 MiB chunks of RouDi's pools");
    const uint64_t depth = cfg.keep_all ? kMaxQueue : uint64_t(cfg.history_depth);
    if (depth > kMaxQueue)
      return fail(Errc::unsupported, "iceoryx: --history keep-last:" + std::to_string(depth) +
                                         ": a subscriber queue holds at most 256 samples");
    durability_ = cfg.durability.empty() ? "volatile" : cfg.durability;
    const uint64_t history = durability_ == "transient-local" ? std::min(depth, kMaxHistory) : 0;
    const bool reliable = reliability_ == "reliable";

    iox::log::LogManager::GetLogManager().SetDefaultLogLevel(iox::log::LogLevel::kWarn);
    const std::string name = std::string("mwperf-iox-") + std::to_string(cfg.run_id) +
                             (cfg.role == Role::pub ? "-pub" : "-sub");
    // Waits for RouDi (the controller has started it); aborts after 60 s without.
    iox::runtime::PoshRuntime::initRuntime(iox::RuntimeName_t(iox::cxx::TruncateToCapacity, name));

    iox::popo::PublisherOptions po;
    po.subscriberTooSlowPolicy = reliable ? iox::popo::ConsumerTooSlowPolicy::WAIT_FOR_CONSUMER
                                          : iox::popo::ConsumerTooSlowPolicy::DISCARD_OLDEST_DATA;
    po.historyCapacity = history;
    iox::popo::SubscriberOptions so;
    so.queueCapacity = depth;
    so.queueFullPolicy = reliable ? iox::popo::QueueFullPolicy::BLOCK_PRODUCER
                                  : iox::popo::QueueFullPolicy::DISCARD_OLDEST_DATA;
    so.historyRequest = history;
    so.requiresPublisherHistorySupport = history > 0;
    pub_.emplace(service(cfg.role == Role::pub ? "data" : "echo", cfg.run_id), po);
    sub_.emplace(service(cfg.role == Role::pub ? "echo" : "data", cfg.run_id), so);
    if (receive_ == "waitset") {
      trigger_.emplace();
      waitset_.emplace();
      if (waitset_->attachState(*sub_, iox::popo::SubscriberState::HAS_DATA).has_error() ||
          waitset_->attachEvent(*trigger_).has_error())
        return fail(Errc::io, "iceoryx: cannot attach to the wait set");
    }
    JsonObject j;
    j.str("runtime", name).str("reliability", reliability_).str("durability", durability_);
    j.str("history", cfg.keep_all ? "keep-all" : "keep-last:" + std::to_string(depth));
    j.unum("queue_capacity", depth).unum("history_capacity", history);
    j.str("queue_full_policy", reliable ? "BLOCK_PRODUCER" : "DISCARD_OLDEST_DATA");
    j.str("receive", receive_).str("service", std::string("mwperf/") + (cfg.role == Role::pub ? "data" : "echo") + "/" +
                                                  std::to_string(cfg.run_id));
    config_json_ = j.done();
    return Errc::ok;
  }

  // A subscriber of ours counts only once a publisher has it (its own state
  // says SUBSCRIBED before any publisher exists).
  Errc wait_matched(int64_t timeout_ns) override {
    const auto end = std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout_ns);
    while (!pub_->hasSubscribers()) {
      if (std::chrono::steady_clock::now() >= end)
        return fail(Errc::timeout, "iceoryx: no subscriber of ours within " + std::to_string(timeout_ns / 1000000000) + " s");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return Errc::ok;
  }

  Errc send(const uint8_t* data, size_t len) override {
    auto chunk = pub_->loan(uint32_t(len), 8);
    if (chunk.has_error()) return fail(Errc::timeout, "iceoryx: no chunk to loan (the pool is used up)");
    std::memcpy(chunk.value(), data, len);
    pub_->publish(chunk.value());
    return Errc::ok;
  }

  // The chunk stays ours until the next receive: the core reads it (and may
  // change one header byte of a ping before it echoes) where the publisher put it.
  Errc recv(const uint8_t** data, size_t* len, int64_t timeout_ns) override {
    release();
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (take(data, len)) return Errc::ok;
      if (timeout_ns == 0 || attempt == 1 || !waitset_) return Errc::timeout;
      const auto fired = timeout_ns < 0 ? waitset_->wait()
                                        : waitset_->timedWait(iox::units::Duration::fromNanoseconds(uint64_t(timeout_ns)));
      for (const auto* n : fired)
        if (n->doesOriginateFrom(&*trigger_)) return Errc::timeout;  // woken (an event: it resets itself)
    }
    return Errc::timeout;
  }

  Errc listen(Receiver* r) override {
    receiver_ = r;
    listener_.emplace();
    if (listener_->attachEvent(*sub_, iox::popo::SubscriberEvent::DATA_RECEIVED,
                               iox::popo::createNotificationCallback(on_data, *this)).has_error())
      return fail(Errc::io, "iceoryx: cannot attach the listener");
    on_data(&*sub_, this);  // what arrived before (an event fires for new samples only)
    return Errc::ok;
  }

  bool can_wake() const override { return waitset_.has_value(); }
  void wake() override {
    if (trigger_) trigger_->trigger();
  }

  void close() override {
    if (listener_) listener_->detachEvent(*sub_, iox::popo::SubscriberEvent::DATA_RECEIVED);
    listener_.reset();
    release();
    waitset_.reset();
    trigger_.reset();
    sub_.reset();
    pub_.reset();
  }

 private:
  bool take(const uint8_t** data, size_t* len) {
    auto chunk = sub_->take();
    if (chunk.has_error()) return false;
    held_ = chunk.value();
    *data = static_cast<const uint8_t*>(held_);
    *len = iox::mepoo::ChunkHeader::fromUserPayload(held_)->userPayloadSize();
    return true;
  }

  void release() {
    if (held_ != nullptr) sub_->release(held_);
    held_ = nullptr;
  }

  // On iceoryx's listener thread: every sample available, straight to the core.
  static void on_data(iox::popo::UntypedSubscriber*, IceoryxAdapter* self) {
    self->drain_.run([self] {
      const uint8_t* data;
      size_t len;
      while (self->take(&data, &len)) {
        self->receiver_->on_message(data, len);
        self->release();
      }
    });
  }

  std::optional<iox::popo::UntypedPublisher> pub_;
  std::optional<iox::popo::UntypedSubscriber> sub_;
  std::optional<iox::popo::WaitSet<>> waitset_;
  std::optional<iox::popo::Listener> listener_;
  std::optional<iox::popo::UserTrigger> trigger_;
  const void* held_ = nullptr;
  Receiver* receiver_ = nullptr;
  SerialDrain drain_;
  std::string durability_, config_json_;
};

}  // namespace

std::unique_ptr<Adapter> make_iceoryx_adapter() { return std::make_unique<IceoryxAdapter>(); }

}  // namespace mwperf
