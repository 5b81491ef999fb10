// Fast DDS's participant of a discovery point (core/discovery.h), built into
// the fastdds adapter (Debian's 2.9). Profiles: `unicast` is the adapter's
// loopback configuration (UDPv4 on 127.0.0.1 only, 127.0.0.1 as initial peer
// for participant ids 0..N+9, no multicast); `default` is Fast DDS's simple
// discovery as it comes (SPDP multicast on every interface of the namespace),
// on UDPv4 alone: shared memory is off, since the namespaces of a pair stand for
// two hosts. `tuned` is its Discovery Server: participant 0 serves at
// --server (unicast, no multicast at all), every other participant is its client.
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>
#include <fastrtps/utils/IPLocator.h>
#include <fastrtps/xmlparser/XMLProfileManager.h>
#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>

#include <cstring>
#include <mutex>
#include <sstream>
#include <vector>

#include "adapters/fastdds/fastdds_discovery.h"
#include "adapters/fastdds/fastdds_type.h"
#include "util/json.h"
#include "util/loaded_libs.h"

namespace mwperf {
namespace {

namespace dds = eprosima::fastdds::dds;
using eprosima::fastrtps::rtps::IPLocator;
using eprosima::fastrtps::rtps::Locator_t;
using fastdds_compat::kOk;
using fastdds_type::RawSample;
using fastdds_type::RawType;

class FastddsParticipant final : public DiscoveryParticipant {
 public:
  ~FastddsParticipant() override { close(); }

  Errc open(const DiscoveryOptions& o) override {
    if (o.profile == "default" && o.nic == "lo")
      return fail(Errc::unsupported, "fastdds: --discovery " + o.profile +
                                         " multicasts: it runs on a namespace pair's link (--link netns), not on lo");
    JsonObject j;
    if (o.hosted > 1) {
      // Participants of one process would otherwise hand each other discovery and data in memory
      // (intraprocess delivery, on by default): off, they talk over UDP as processes do.
      static std::once_flag once;
      std::call_once(once, [] {
        eprosima::fastrtps::LibrarySettingsAttributes lib;
        lib.intraprocess_delivery = eprosima::fastrtps::INTRAPROCESS_OFF;
        eprosima::fastrtps::xmlparser::XMLProfileManager::library_settings(lib);
      });
      j.str("intraprocess_delivery", "off");
    }
    dds::DomainParticipantQos pq = dds::PARTICIPANT_QOS_DEFAULT;
    pq.name("mwperf-discovery");
    pq.transport().use_builtin_transports = false;
    auto udp = std::make_shared<eprosima::fastdds::rtps::UDPv4TransportDescriptor>();
    j.str("transports", "udpv4 (shared memory off)");
    if (o.profile != "tuned") j.str("discovery", "simple");
    if (o.profile == "unicast") {
      udp->interfaceWhiteList.push_back("127.0.0.1");
      udp->maxInitialPeersRange = o.participants + 10;
      Locator_t peer, self;
      IPLocator::setIPv4(peer, o.peer);
      IPLocator::setIPv4(self, "127.0.0.1");
      pq.wire_protocol().builtin.initialPeersList.push_back(peer);
      pq.wire_protocol().builtin.metatrafficUnicastLocatorList.push_back(self);
      pq.wire_protocol().default_unicast_locator_list.push_back(self);
      j.str("interface_whitelist", "127.0.0.1").str("initial_peer", o.peer);
      j.unum("max_initial_peers_range", o.participants + 10).str("multicast", "none");
    } else if (o.profile == "tuned") {
      serve(o, &pq, &j);
    } else {
      j.str("interface_whitelist", "").str("multicast", "SPDP 239.255.0.1 (Fast DDS's default)");
    }
    pq.transport().user_transports.push_back(udp);
    participant_ = dds::DomainParticipantFactory::get_instance()->create_participant(o.domain, pq);
    if (participant_ == nullptr) return fail(Errc::io, "fastdds: cannot create the participant");
    dds::TypeSupport ts(new RawType(false, 64));
    if (ts.register_type(participant_) != kOk) return fail(Errc::io, "fastdds: cannot register the type");
    dds::Publisher* pub = participant_->create_publisher(dds::PUBLISHER_QOS_DEFAULT);
    dds::Subscriber* sub = participant_->create_subscriber(dds::SUBSCRIBER_QOS_DEFAULT);
    if (pub == nullptr || sub == nullptr) return fail(Errc::io, "fastdds: cannot create publisher/subscriber");
    dds::DataWriterQos wq = dds::DATAWRITER_QOS_DEFAULT;
    dds::DataReaderQos rq = dds::DATAREADER_QOS_DEFAULT;
    wq.reliability().kind = rq.reliability().kind = dds::RELIABLE_RELIABILITY_QOS;
    wq.durability().kind = rq.durability().kind = dds::TRANSIENT_LOCAL_DURABILITY_QOS;
    wq.history().kind = rq.history().kind = dds::KEEP_LAST_HISTORY_QOS;
    wq.history().depth = rq.history().depth = 1;
    rq.history().kind = dds::KEEP_ALL_HISTORY_QOS;  // one instance for every writer: keep-last 1 would drop
    wq.endpoint().history_memory_policy = rq.endpoint().history_memory_policy =
        fastdds_compat::rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
    uint8_t index[4];
    std::memcpy(index, &o.index, 4);
    RawSample sample;
    sample.out = index;
    sample.out_len = 4;
    for (uint32_t t = 0; t < o.topics; ++t) {
      const std::string name = discovery_topic(o.run_id, t);
      dds::Topic* topic = participant_->create_topic(name, ts.get_type_name(), dds::TOPIC_QOS_DEFAULT);
      dds::DataWriter* w = topic == nullptr ? nullptr : pub->create_datawriter(topic, wq);
      dds::DataReader* r = w == nullptr ? nullptr : sub->create_datareader(topic, rq);
      if (r == nullptr) return fail(Errc::io, "fastdds: topic " + name + ": cannot create its writer or reader");
      if (w->write(&sample, fastdds_compat::rtps::InstanceHandle_t()) != kOk)
        return fail(Errc::io, "fastdds: topic " + name + ": the write failed");
      readers_.push_back(r);
    }
    taken_.in.reserve(64);
    j.str("qos", "reliable, transient-local; writers keep-last 1, readers keep-all");
    config_ = j.done();
    return Errc::ok;
  }

  // The Discovery Server: participant 0 serves at --server, every other is its client.
  static void serve(const DiscoveryOptions& o, dds::DomainParticipantQos* pq, JsonObject* j) {
    namespace fr = eprosima::fastrtps::rtps;
    static const char* const kPrefix = "44.53.00.5f.45.50.52.4f.53.49.4d.41";  // Fast DDS's documented example
    Locator_t server;
    IPLocator::setIPv4(server, o.server);
    server.port = kDiscoveryServerPort;
    auto& builtin = pq->wire_protocol().builtin;
    if (o.index == 0) {
      builtin.discovery_config.discoveryProtocol = fr::DiscoveryProtocol_t::SERVER;
      std::istringstream(kPrefix) >> pq->wire_protocol().prefix;
      builtin.metatrafficUnicastLocatorList.push_back(server);
    } else {
      builtin.discovery_config.discoveryProtocol = fr::DiscoveryProtocol_t::CLIENT;
      eprosima::fastdds::rtps::RemoteServerAttributes remote;
      remote.ReadguidPrefix(kPrefix);
      remote.metatrafficUnicastLocatorList.push_back(server);
      builtin.discovery_config.m_DiscoveryServers.push_back(remote);
    }
    j->str("discovery", o.index == 0 ? "discovery server (this participant serves)" : "discovery server (client)");
    j->str("server", o.server + ":" + std::to_string(kDiscoveryServerPort)).str("server_prefix", kPrefix);
    j->str("multicast", "none");
  }

  uint64_t matched() override {
    uint64_t n = 0;
    for (dds::DataReader* r : readers_) {
      dds::SubscriptionMatchedStatus sm;
      if (r->get_subscription_matched_status(sm) == kOk) n += uint64_t(sm.current_count);
    }
    return n;
  }

  void take(void (*seen)(void*, uint32_t, uint32_t), void* ctx) override {
    for (uint32_t t = 0; t < readers_.size(); ++t) {
      dds::SampleInfo info;
      while (readers_[t]->take_next_sample(&taken_, &info) == kOk) {
        if (!info.valid_data) continue;
        uint32_t from = UINT32_MAX;
        if (taken_.in.size() == 4) std::memcpy(&from, taken_.in.data(), 4);
        seen(ctx, t, from);
      }
    }
  }

  std::string config_json() const override { return config_; }
  std::string version() const override {
    const std::string v = loaded_version(fastdds_compat::kLibrary, fastdds_compat::kBuiltVersion);
    return v.empty() ? fastdds_compat::kBuiltVersion : v;
  }
  void close() override {
    if (participant_ == nullptr) return;
    participant_->delete_contained_entities();
    dds::DomainParticipantFactory::get_instance()->delete_participant(participant_);
    participant_ = nullptr;
    readers_.clear();
  }

 private:
  dds::DomainParticipant* participant_ = nullptr;
  std::vector<dds::DataReader*> readers_;
  RawSample taken_;
  std::string config_;
};

}  // namespace

std::unique_ptr<DiscoveryParticipant> make_fastdds_participant() { return std::make_unique<FastddsParticipant>(); }

}  // namespace mwperf
