// iceoryx 2.0 (Debian: libiceoryx-posh-dev), zero-copy shared memory on one
// host, through the RouDi daemon the controller starts for the point (the
// description's service "roudi"). A message is loaned from the publisher's
// shared memory, the core's bytes copied in, and published; the subscriber
// takes the chunk where the publisher wrote it (no copy) and releases it at
// the next receive.
//
// Reliable: the publisher waits for a subscriber whose queue is full
// (WAIT_FOR_CONSUMER + BLOCK_PRODUCER); best effort: the oldest sample goes.
// keep-last:N is the subscriber's queue, at most MAX_SUBSCRIBER_QUEUE_CAPACITY
// (256 in iceoryx 2.0); keep-all is that largest queue, under reliable only
// (the publisher waits while it is full, so nothing is dropped: what keep-all
// promises); transient-local is the publisher's history, at most
// MAX_PUBLISHER_HISTORY (16). Beyond these the run is refused, with the limit.
// A subscriber's data is RouDi's chunk, shared by every subscriber of the
// publisher: read-only (the core writes its echo into a loaned chunk, the
// ping copied in once).
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

#include "iceoryx_posh/runtime/service_discovery.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <optional>
#include <thread>

#include "adapters/iceoryx/iceoryx_discovery.h"
#include "core/adapter.h"
#include "util/json.h"
#include "util/serial_drain.h"

namespace mwperf {
namespace {

// The largest chunk of the RouDi configuration the controller starts (its
// 16 MiB pool); a loan above it would abort the process.
constexpr size_t kMaxSize = 16u << 20;
constexpr uint64_t kMaxQueue = iox::MAX_SUBSCRIBER_QUEUE_CAPACITY, kMaxHistory = iox::MAX_PUBLISHER_HISTORY;

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
  d.max_subscribers = iox::MAX_SUBSCRIBERS_PER_PUBLISHER;
  d.writable_data = false;  // RouDi's chunk, shared by every subscriber
  d.size_note = "the largest chunk of RouDi's memory pools (roudi.toml, next to the agent)";
  // RouDi's service registry on this host: the one-host profile (no link: shared memory; no threads: one runtime
  // per process).
  d.discoveries = "unicast";
  d.notes =
      "zero-copy chunks of a RouDi-managed shared memory; queue depth at most 256 (keep-all: that queue, "
      "reliable only), transient-local history at most 16";
  return d;
}

iox::capro::IdString_t id(const std::string& s) { return iox::capro::IdString_t(iox::cxx::TruncateToCapacity, s); }

iox::capro::ServiceDescription service(const char* event, uint32_t run_id) {
  return iox::capro::ServiceDescription{id("mwperf"), id(event), id(std::to_string(run_id))};
}

// A subscriber's presence: offered once its data subscription is connected,
// so that a publisher can count its subscribers through RouDi's service
// discovery (iceoryx 2.0 tells a publisher only whether it has any).
constexpr const char* kPresence = "mwperf-sub";
iox::capro::ServiceDescription presence(uint32_t run_id) {
  static std::atomic<uint32_t> instances{0};  // --subscribers-as threads: several subscribers in one process
  return iox::capro::ServiceDescription{id(kPresence), id(std::to_string(run_id)),
                                        id(std::to_string(getpid()) + "." + std::to_string(instances++))};
}

class IceoryxAdapter final : public Adapter {
 public:
  ~IceoryxAdapter() override { close(); }
  const Description& description() const override {
    static const Description d = describe();
    return d;
  }
  std::string version() const override { return ICEORYX_LATEST_RELEASE_VERSION; }
  std::string versions() const override { return JsonObject().str("iceoryx", ICEORYX_LATEST_RELEASE_VERSION).done(); }
  // Every sample moves by loan: the writer loans a chunk of RouDi's memory (the
  // core's bytes copied in), the reader reads it where the writer put it.
  std::string data_path() const override {
    const uint64_t sent = loaned_.load(), taken = taken_.load();
    JsonObject j;
    j.str("source", "iceoryx UntypedPublisher::loan (sent), UntypedSubscriber::take in place (received)");
    j.str("send", sent > 0 ? "loan" : "none").str("receive", taken > 0 ? "loan" : "none");
    return j.unum("sent", sent).unum("received", taken).done();
  }
  std::string effective_config() const override { return config_json_; }
  std::unique_ptr<DiscoveryParticipant> make_participant() const override { return make_iceoryx_participant(); }

  Errc open(const AdapterConfig& cfg) override {
    transport_ = "shm";
    reliability_ = cfg.reliability.empty() ? "reliable" : cfg.reliability;
    receive_ = cfg.receive.empty() ? "waitset" : cfg.receive;
    if (cfg.size > kMaxSize) return fail(Errc::unsupported, "iceoryx: size above the 16 MiB chunks of RouDi's pools");
    const bool reliable = reliability_ == "reliable";
    if (cfg.keep_all && !reliable)
      return fail(Errc::unsupported, "iceoryx: --history keep-all with best-effort: a subscriber queue holds at most " +
                                         std::to_string(kMaxQueue) +
                                         " samples and drops the oldest when full "
                                         "(choose reliable, or keep-last:N)");
    const uint64_t depth = cfg.keep_all ? kMaxQueue : uint64_t(cfg.history_depth);
    if (depth > kMaxQueue)
      return fail(Errc::unsupported, "iceoryx: --history keep-last:" + std::to_string(depth) +
                                         ": a subscriber queue holds at most " + std::to_string(kMaxQueue) +
                                         " samples");
    durability_ = cfg.durability.empty() ? "volatile" : cfg.durability;
    if (durability_ == "transient-local" && depth > kMaxHistory)
      return fail(Errc::unsupported,
                  "iceoryx: --durability transient-local with " +
                      (cfg.keep_all ? std::string("keep-all") : "keep-last:" + std::to_string(depth)) +
                      ": a publisher keeps at most " + std::to_string(kMaxHistory) +
                      " samples of history (choose keep-last:N, N <= " + std::to_string(kMaxHistory) + ")");
    const uint64_t history = durability_ == "transient-local" ? depth : 0;
    subscribers_ = cfg.subscribers;
    run_id_ = cfg.run_id;

    iox::log::LogManager::GetLogManager().SetDefaultLogLevel(iox::log::LogLevel::kWarn);
    // One runtime per process, named after it: RouDi aborts a second process
    // that registers a name already in use (fan-out: N subscriber processes).
    const std::string name = std::string("mwperf-iox-") + std::to_string(cfg.run_id) +
                             (cfg.role == Role::pub ? "-pub-" : "-sub-") + std::to_string(getpid());
    // Waits for RouDi (the controller has started it); aborts after 60 s without.
    iox::runtime::PoshRuntime::initRuntime(iox::RuntimeName_t(iox::cxx::TruncateToCapacity, name));

    iox::popo::PublisherOptions po;
    po.subscriberTooSlowPolicy = reliable ? iox::popo::ConsumerTooSlowPolicy::WAIT_FOR_CONSUMER
                                          : iox::popo::ConsumerTooSlowPolicy::DISCARD_OLDEST_DATA;
    po.historyCapacity = history;
    iox::popo::SubscriberOptions so;
    so.queueCapacity = depth;
    so.queueFullPolicy =
        reliable ? iox::popo::QueueFullPolicy::BLOCK_PRODUCER : iox::popo::QueueFullPolicy::DISCARD_OLDEST_DATA;
    so.historyRequest = history;
    so.requiresPublisherHistorySupport = history > 0;
    pub_.emplace(service(cfg.role == Role::pub ? "data" : "echo", cfg.run_id), po);
    sub_.emplace(service(cfg.role == Role::pub ? "echo" : "data", cfg.run_id), so);
    if (cfg.role == Role::sub) {
      iox::popo::PublisherOptions announce;
      announce.offerOnCreate = false;
      presence_.emplace(presence(cfg.run_id), announce);
    }
    if (receive_ == "waitset") {
      trigger_.emplace();
      waitset_.emplace();
      if (waitset_->attachState(*sub_, iox::popo::SubscriberState::HAS_DATA).has_error() ||
          waitset_->attachEvent(*trigger_).has_error())
        return fail(Errc::io, "iceoryx: cannot attach to the wait set");
    }
    JsonObject j;
    j.str("runtime", name).str("reliability", reliability_).str("durability", durability_);
    // "history" is the option's value in force (the record's qos.history); what keep-all is here, beside it
    j.str("history", cfg.keep_all ? "keep-all" : "keep-last:" + std::to_string(depth));
    if (cfg.keep_all)
      j.str("keep_all", "a subscriber queue of " + std::to_string(depth) +
                            " (iceoryx's largest); the publisher waits while it is full");
    j.unum("queue_capacity", depth).unum("history_capacity", history);
    j.str("queue_full_policy", reliable ? "BLOCK_PRODUCER" : "DISCARD_OLDEST_DATA");
    j.str("receive", receive_)
        .str("service",
             std::string("mwperf/") + (cfg.role == Role::pub ? "data" : "echo") + "/" + std::to_string(cfg.run_id));
    config_json_ = j.done();
    return Errc::ok;
  }

  // A subscriber: its echo publisher has the publisher's echo subscriber and
  // its data subscription is connected; then it says so (its presence). A
  // publisher: its data has subscribers and as many are present as it serves.
  Errc wait_matched(int64_t timeout_ns) override {
    const auto end = std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout_ns);
    std::optional<iox::runtime::ServiceDiscovery> discovery;
    if (!presence_) discovery.emplace();
    for (;;) {
      const bool connected = pub_->hasSubscribers();
      if (presence_ && connected && sub_->getSubscriptionState() == iox::SubscribeState::SUBSCRIBED) {
        presence_->offer();
        return Errc::ok;
      }
      const uint32_t present = discovery ? count_present(*discovery) : 0;
      if (discovery && connected && present >= subscribers_) return Errc::ok;
      if (std::chrono::steady_clock::now() >= end)
        return fail(Errc::timeout,
                    presence_ ? "iceoryx: no publisher of ours within " + std::to_string(timeout_ns / 1000000000) + " s"
                              : "iceoryx: " + std::to_string(present) + " of " + std::to_string(subscribers_) +
                                    " subscriber(s) within " + std::to_string(timeout_ns / 1000000000) + " s");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  Errc send(const uint8_t* data, size_t len) override {
    uint8_t* chunk = nullptr;
    const Errc e = loan(data, len, &chunk);
    return e == Errc::ok ? publish_loaned(chunk, len) : e;
  }

  // A chunk of RouDi's memory, `from` copied in: the echo's pong is written
  // there once (the subscriber's data is read-only, shared by every subscriber).
  bool can_loan() const override { return true; }
  Errc loan(const uint8_t* from, size_t len, uint8_t** out) override {
    auto chunk = pub_->loan(uint32_t(len), 8);
    if (chunk.has_error()) return fail(Errc::timeout, "iceoryx: no chunk to loan (the pool is used up)");
    std::memcpy(chunk.value(), from, len);
    *out = static_cast<uint8_t*>(chunk.value());
    return Errc::ok;
  }
  Errc publish_loaned(uint8_t* chunk, size_t) override {
    pub_->publish(chunk);
    loaned_.fetch_add(1, std::memory_order_relaxed);
    return Errc::ok;
  }

  // The chunk stays ours until the next receive: the core reads it where the
  // publisher put it (read-only: every subscriber of the publisher shares it).
  Errc recv(const uint8_t** data, size_t* len, int64_t timeout_ns) override {
    release();
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (take(data, len)) return Errc::ok;
      if (timeout_ns == 0 || attempt == 1 || !waitset_) return Errc::timeout;
      const auto fired = timeout_ns < 0
                             ? waitset_->wait()
                             : waitset_->timedWait(iox::units::Duration::fromNanoseconds(uint64_t(timeout_ns)));
      for (const auto* n : fired)
        if (n->doesOriginateFrom(&*trigger_)) return Errc::timeout;  // woken (an event: it resets itself)
    }
    return Errc::timeout;
  }

  Errc listen(Receiver* r) override {
    receiver_ = r;
    listener_.emplace();
    if (listener_
            ->attachEvent(*sub_, iox::popo::SubscriberEvent::DATA_RECEIVED,
                          iox::popo::createNotificationCallback(on_data, *this))
            .has_error())
      return fail(Errc::io, "iceoryx: cannot attach the listener");
    on_data(&*sub_, this);  // what arrived before (an event fires for new samples only)
    return Errc::ok;
  }

  bool can_wake() const override { return waitset_.has_value(); }
  void wake() override {
    if (trigger_) trigger_->trigger();
  }

  void close() override {
    presence_.reset();
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
    taken_.fetch_add(1, std::memory_order_relaxed);
    *data = static_cast<const uint8_t*>(held_);
    *len = iox::mepoo::ChunkHeader::fromUserPayload(held_)->userPayloadSize();
    return true;
  }

  uint32_t count_present(iox::runtime::ServiceDiscovery& discovery) const {
    uint32_t n = 0;
    discovery.findService(
        id(kPresence), id(std::to_string(run_id_)), iox::cxx::nullopt,
        [&n](const iox::capro::ServiceDescription&) { ++n; }, iox::popo::MessagingPattern::PUB_SUB);
    return n;
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
  std::optional<iox::popo::UntypedPublisher> presence_;  // a subscriber's: offered once connected
  std::optional<iox::popo::WaitSet<>> waitset_;
  std::optional<iox::popo::Listener> listener_;
  std::optional<iox::popo::UserTrigger> trigger_;
  const void* held_ = nullptr;
  Receiver* receiver_ = nullptr;
  SerialDrain drain_;
  uint32_t subscribers_ = 1, run_id_ = 0;
  std::atomic<uint64_t> loaned_{0}, taken_{0};
  std::string durability_, config_json_;
};

}  // namespace

std::unique_ptr<Adapter> make_iceoryx_adapter() { return std::make_unique<IceoryxAdapter>(); }

}  // namespace mwperf
