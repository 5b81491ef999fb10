// iceoryx's participant of a discovery point (core/discovery.h), built into
// the iceoryx adapter (2.0, Debian). iceoryx's discovery is RouDi's: every
// runtime registers with the one daemon of the host, which connects each
// subscriber to every publisher offering its service. One profile, `unicast`
// (this host only, nothing multicast: the daemon the controller starts, no
// network at all); a namespace pair's link is refused (shared memory serves
// one host), and so are threads (one runtime per process).
//
// Topic t is the service {discovery_topic(run, t), "mwperf", "discovery"}: a
// publisher with a history of 1 (its one sample, kept for late subscribers:
// transient-local; written before it is offered: see open()) and a subscriber asking for that history. matched() is
// what RouDi says: for each subscriber it reports SUBSCRIBED (connected), the publishers RouDi's service registry
// counts on its service (the registry RouDi publishes, read here as iceoryx's ServiceDiscovery reads it), own one
// included, as RouDi connects a subscriber to its own runtime's publishers.
#include "iceoryx_hoofs/log/logmanager.hpp"
#include "iceoryx_posh/internal/roudi/service_registry.hpp"
#include "iceoryx_posh/mepoo/chunk_header.hpp"
#include "iceoryx_posh/popo/subscriber.hpp"
#include "iceoryx_posh/popo/untyped_publisher.hpp"
#include "iceoryx_posh/popo/untyped_subscriber.hpp"
#include "iceoryx_posh/runtime/posh_runtime.hpp"
#include "iceoryx_versions.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <optional>
#include <vector>

#include "adapters/iceoryx/iceoryx_discovery.h"
#include "util/json.h"

namespace mwperf {
namespace {

iox::capro::IdString_t id(const std::string& s) { return iox::capro::IdString_t(iox::cxx::TruncateToCapacity, s); }

iox::capro::ServiceDescription topic_service(uint32_t run_id, uint32_t t) {
  return {id(discovery_topic(run_id, t)), id("mwperf"), id("discovery")};
}

class IceoryxParticipant final : public DiscoveryParticipant {
 public:
  ~IceoryxParticipant() override { close(); }

  Errc open(const DiscoveryOptions& o) override {
    if (o.profile != "unicast")
      return fail(Errc::unsupported, "iceoryx: --discovery " + o.profile +
                                         ": iceoryx has one discovery, RouDi's service registry on this host "
                                         "(--discovery unicast)");
    if (o.nic != "lo")
      return fail(Errc::unsupported,
                  "iceoryx: --link netns: RouDi and its shared memory serve one host; its participants never meet "
                  "over a link");
    if (o.hosted > 1)
      return fail(Errc::unsupported,
                  "iceoryx: --participants-as threads: iceoryx has one runtime per process (one name with RouDi), "
                  "so participants of one process would be one: run them as processes");
    if (o.participants > iox::MAX_SUBSCRIBERS_PER_PUBLISHER)
      return fail(Errc::unsupported, "iceoryx: --participants " + std::to_string(o.participants) +
                                         ": a publisher serves at most " +
                                         std::to_string(iox::MAX_SUBSCRIBERS_PER_PUBLISHER) + " subscribers");
    if (uint64_t(o.participants) * o.topics > iox::MAX_PUBLISHERS)
      return fail(Errc::unsupported,
                  "iceoryx: --participants x --topics " + std::to_string(uint64_t(o.participants) * o.topics) +
                      ": RouDi holds at most " + std::to_string(iox::MAX_PUBLISHERS) + " publishers");
    iox::log::LogManager::GetLogManager().SetDefaultLogLevel(iox::log::LogLevel::kWarn);
    runtime_ = "mwperf-iox-disc-" + std::to_string(o.run_id) + "-" + std::to_string(o.index);
    // Registers with RouDi (the controller has started it); iceoryx aborts after 60 s without one.
    iox::runtime::PoshRuntime::initRuntime(iox::RuntimeName_t(iox::cxx::TruncateToCapacity, runtime_));
    registry_.emplace(
        iox::capro::ServiceDescription{iox::SERVICE_DISCOVERY_SERVICE_NAME, iox::SERVICE_DISCOVERY_INSTANCE_NAME,
                                       iox::SERVICE_DISCOVERY_EVENT_NAME},
        iox::popo::SubscriberOptions{1U, 1U, iox::NodeName_t("mwperf registry"), true});
    queue_ = std::min<uint64_t>(o.participants, iox::MAX_SUBSCRIBER_QUEUE_CAPACITY);
    iox::popo::PublisherOptions po;
    po.historyCapacity = 1;
    // Written before it is offered, so into the history alone: in iceoryx 2.0.3 a publish delivers to the
    // connected queues and then, the lock let go in between, adds to the history
    // (ChunkDistributor::deliverToAllStoredQueues), so a subscriber connected in that gap gets the sample
    // neither way (seen here when offered on creation: 1 to 3 of 3800 at N = 20, T = 10 in 3 runs of 12, never
    // arriving; none in 20 runs so). The offer after the write costs ~25 ms there (RouDi handles it later).
    po.offerOnCreate = false;
    iox::popo::SubscriberOptions so;
    so.queueCapacity = queue_;
    so.historyRequest = 1;
    so.requiresPublisherHistorySupport = true;
    publishers_.assign(o.topics, 0);
    for (uint32_t t = 0; t < o.topics; ++t) {
      services_.push_back(topic_service(o.run_id, t));
      pubs_.emplace_back(services_.back(), po);
      subs_.emplace_back(services_.back(), so);
      auto chunk = pubs_.back().loan(4, 4);
      if (chunk.has_error()) return fail(Errc::io, "iceoryx: no chunk to loan for topic " + std::to_string(t));
      std::memcpy(chunk.value(), &o.index, 4);
      pubs_.back().publish(chunk.value());
      pubs_.back().offer();
    }
    return Errc::ok;
  }

  uint64_t matched() override {
    // The registry's newest sample, its counts of our topics copied out and the chunk given back at once: RouDi
    // publishes each change into a chunk of its own, and subscribers that kept theirs would leave it none.
    registry_->take().and_then([this](auto& sample) {
      for (size_t t = 0; t < services_.size(); ++t) {
        const iox::capro::ServiceDescription& s = services_[t];
        publishers_[t] = 0;
        sample->find(s.getServiceIDString(), s.getInstanceIDString(), s.getEventIDString(),
                     [this, t](const iox::roudi::ServiceRegistry::ServiceDescriptionEntry& e) {
                       publishers_[t] += e.publisherCount;
                     });
      }
    });
    uint64_t n = 0;
    for (size_t t = 0; t < subs_.size(); ++t)
      if (subs_[t].getSubscriptionState() == iox::SubscribeState::SUBSCRIBED) n += publishers_[t];
    return n;
  }

  void take(void (*seen)(void*, uint32_t, uint32_t), void* ctx) override {
    for (uint32_t t = 0; t < subs_.size(); ++t)
      for (;;) {
        auto chunk = subs_[t].take();
        if (chunk.has_error()) break;
        uint32_t from = UINT32_MAX;
        if (iox::mepoo::ChunkHeader::fromUserPayload(chunk.value())->userPayloadSize() == 4)
          std::memcpy(&from, chunk.value(), 4);
        subs_[t].release(chunk.value());
        seen(ctx, t, from);
      }
  }

  std::string config_json() const override {
    return JsonObject()
        .str("discovery", "RouDi (iox-roudi, the controller's, one per host): its service registry")
        .str("runtime", runtime_)
        .str("qos", "publisher history 1; subscriber history request 1, queue " + std::to_string(queue_))
        .str("matched",
             "per subscriber in state SUBSCRIBED: the publishers RouDi's service registry counts on its service")
        .done();
  }
  std::string version() const override { return ICEORYX_LATEST_RELEASE_VERSION; }
  void close() override {
    publishers_.clear();
    registry_.reset();
    subs_.clear();
    pubs_.clear();
    services_.clear();
  }

 private:
  std::string runtime_;
  uint64_t queue_ = 0;
  std::deque<iox::capro::ServiceDescription> services_;
  std::deque<iox::popo::UntypedPublisher> pubs_;  // ports are neither copied nor moved: a deque keeps them in place
  std::deque<iox::popo::UntypedSubscriber> subs_;
  std::optional<iox::popo::Subscriber<iox::roudi::ServiceRegistry>> registry_;
  std::vector<uint64_t> publishers_;  // of each topic, as the registry last counted them
};

}  // namespace

std::unique_ptr<DiscoveryParticipant> make_iceoryx_participant() { return std::make_unique<IceoryxParticipant>(); }

}  // namespace mwperf
