// Fast DDS (C++ API): three adapters of this one source, fastdds on Debian's
// Fast DDS 2.9 / Fast CDR 1, fastdds-jazzy on the ROS 2 Jazzy wheels' 2.14 /
// Fast CDR 2 (the Fast DDS ros2's rmw_fastrtps_cpp runs on) and fastdds3 on the
// Kilted wheels' 3.2 / Fast CDR 2.3 (ros2-kilted's): ../ros2/wheels.cmake;
// fastdds_compat.h covers Fast DDS 2 / 3, fastcdr_compat.h Fast CDR 1 / 2. What
// each leaves to its version's defaults is read back and recorded (heartbeat,
// data sharing, the transports' queue and message sizes), so that a versions
// comparison names a default that differs. The type is ../cyclonedds/mwperf.idl's: ROS 2's
// std_msgs::msg::dds_::UInt8MultiArray_ (keyed points: mwperf's
// KeyedUInt8MultiArray_) on `rt/` topics, as the other DDS adapters and ROS 2,
// serialized by a TopicDataType of ours to the same CDR fastddsgen's code
// writes, but straight from the core's buffer: one copy on send, as Cyclone.
// Transports are explicit: builtin transports are off; `udp` is UDPv4
// whitelisted to the --nic address (127.0.0.1 on one host) with unicast initial
// peers, `shm` is shared memory only (no UDP locators: that breaks matching),
// and the default is both, as Fast DDS itself does (it picks shared memory
// between processes of one host).
//
// Receiving: `listener` (the default) takes the samples inside Fast DDS's
// on_data_available, on its receive thread, and hands each one to the core
// right there; `waitset` takes them on the agent's thread after a wait.
#include <fastdds/dds/core/condition/GuardCondition.hpp>
#include <fastdds/dds/core/condition/StatusCondition.hpp>
#include <fastdds/dds/core/condition/WaitSet.hpp>
#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/DataReaderListener.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <thread>
#include <vector>

#include "adapters/fastdds/fastcdr_compat.h"
#include "adapters/fastdds/fastdds_compat.h"
#include "adapters/fastdds/fastdds_security.h"
#include "adapters/fastdds/fastdds_shm.h"
#include "adapters/fastdds/fastdds_type.h"
#include "core/adapter.h"
#ifdef MWPERF_FASTDDS_DISCOVERY
#include "adapters/fastdds/fastdds_discovery.h"
#endif
#include "util/json.h"
#include "util/loaded_libs.h"
#include "util/serial_drain.h"
#include "util/socket_util.h"

// The adapter this build of the source is (adapter.cmake, ../fastdds-jazzy/adapter.cmake).
#ifndef MWPERF_FASTDDS_NAME
#define MWPERF_FASTDDS_NAME "fastdds"
#define MWPERF_FASTDDS_MAKE make_fastdds_adapter
#endif

namespace mwperf {
namespace {

// How its messages start: "fastdds: ..." / "fastdds-jazzy: ...".
const std::string kName = MWPERF_FASTDDS_NAME;

namespace dds = eprosima::fastdds::dds;
namespace rtps = fastdds_compat::rtps;
using fastdds_compat::code;
using fastdds_compat::Duration_t;
using fastdds_compat::kNoData;
using fastdds_compat::kOk;
using fastdds_compat::kTimeout;
using fastdds_compat::ReturnCode_t;
using fastdds_type::RawSample;
using fastdds_type::RawType;
using rtps::IPLocator;
using rtps::Locator_t;

constexpr size_t kMaxSize = 16u << 20;

constexpr int32_t kMaxBlockingMs = 100;    // the DDS default
constexpr uint32_t kUdpBuffer = 4u << 20;  // socket send and receive buffers of the UDPv4 transport
constexpr int32_t kReaderSamples = 5000;   // a keep-last reader's max_samples at least (Fast DDS's default)

Description describe() {
  Description d;
  d.max_size = kMaxSize;
  d.size_note =
      "mwperf's cap, not Fast DDS's (it fragments large samples): the reference sweep's largest message; the type's "
      "payload pool and the shared-memory segment (up to 256 MiB, as ros2's) are sized from it";
  d.transports = "udp,shm";
  d.transport = "shm+udp";
  d.reliabilities = "reliable,best-effort";
  d.reliability = "reliable";
  d.honours = "history,durability,keyed,async,nic,rtps";
  d.remote_transport = "udp";  // its default (shm+udp) would keep to shared memory on one host
  d.leftovers = MWPERF_FASTDDS_SHM_LEFTOVERS;
  d.receives = "listener,waitset";
  d.receive = "listener";
  d.securities = fastdds_security::levels();
  d.security_note = fastdds_security::note();
#ifdef MWPERF_FASTDDS_DISCOVERY
  d.discoveries = kDiscoveryProfiles;
#else
  d.discovery_note = "no discovery participant built for this Fast DDS (the Debian 2.9 adapter, fastdds, has one)";
#endif
  d.notes = "std_msgs::msg::dds_::UInt8MultiArray_ (ROS 2's type; 16 B of CDR before the payload, the key's 4 more)";
  return d;
}

class FastddsAdapter final : public Adapter, public dds::DataReaderListener {
 public:
  ~FastddsAdapter() override { close(); }
  const Description& description() const override {
    static const Description d = describe();
    return d;
  }
  // Fast DDS and Fast CDR as loaded in the process (loaded_libs.h: the file
  // names, the headers' full version where a file name is its soname's major.minor).
  std::string version() const override { return fastdds_version(); }
  std::string versions() const override {
    return JsonObject().str("fastdds", fastdds_version()).str("fastcdr", fastcdr_version()).done();
  }
  static std::string fastdds_version() {
    const std::string v = loaded_version(fastdds_compat::kLibrary, fastdds_compat::kBuiltVersion);
    return v.empty() ? fastdds_compat::kBuiltVersion : v;
  }
  static std::string fastcdr_version() {
    const std::string v = loaded_version("libfastcdr.so", FASTCDR_VERSION_STR);
    return v.empty() ? FASTCDR_VERSION_STR : v;
  }
  std::string effective_config() const override { return config_json_; }
#ifdef MWPERF_FASTDDS_DISCOVERY  // Fast DDS 2.9's build (adapter.cmake)
  std::unique_ptr<DiscoveryParticipant> make_participant() const override { return make_fastdds_participant(); }
#endif

  Errc open(const AdapterConfig& cfg) override {
    cfg_ = cfg;
    transport_ = cfg.transport.empty() ? "shm+udp" : cfg.transport;
    reliability_ = cfg.reliability.empty() ? "reliable" : cfg.reliability;
    receive_ = cfg.receive.empty() ? "listener" : cfg.receive;
    const std::string ip = cfg.nic.empty() || cfg.nic == "lo" ? "127.0.0.1" : interface_ipv4(cfg.nic);
    if (ip.empty())
      return fail(Errc::unsupported, kName + ": --nic " + cfg.nic + ": no IPv4 address on that interface");
    pulled_.in.reserve(cfg.size);
    listened_.in.reserve(cfg.size);

    dds::DomainParticipantQos pq = dds::PARTICIPANT_QOS_DEFAULT;
    pq.name("mwperf");
    pq.transport().use_builtin_transports = false;
    if (transport_ != "udp") {
      auto shm = std::make_shared<eprosima::fastdds::rtps::SharedMemTransportDescriptor>();
      // The same explicit segment and message size as ros2's profile (fastdds_shm.h).
      shm->segment_size(fastdds_shm_segment_size(cfg.size));
      shm->max_message_size(fastdds_shm_max_message_size(cfg.size));
      shm_queue_ = shm->port_queue_capacity();
      pq.transport().user_transports.push_back(shm);
    }
    if (transport_ != "shm") {
      auto udp = std::make_shared<eprosima::fastdds::rtps::UDPv4TransportDescriptor>();
      // Fast DDS 2.9 opens no UDP socket at all when the whitelist names a veth
      // inside a network namespace; there the namespace itself confines the traffic.
      if (!cfg.isolated) udp->interfaceWhiteList.push_back(ip);
      udp->sendBufferSize = udp->receiveBufferSize = kUdpBuffer;
      // Initial peers reach participant ids 0..N-1 on the peer address; more
      // than Fast DDS's 4 so that other participants on the host (other runs,
      // both roles in one process in tests) cannot push ours out of reach.
      udp->maxInitialPeersRange = 32;
      udp_max_message_ = udp->maxMessageSize;
      pq.transport().user_transports.push_back(udp);
      Locator_t peer;
      IPLocator::setIPv4(peer, cfg.peer);
      pq.wire_protocol().builtin.initialPeersList.push_back(peer);
      Locator_t self;
      IPLocator::setIPv4(self, ip);
      pq.wire_protocol().builtin.metatrafficUnicastLocatorList.push_back(self);
      pq.wire_protocol().default_unicast_locator_list.push_back(self);
    }
    Enclave enclave;
    if (secured(cfg.security)) {
      if (const std::string why = read_enclave(cfg.enclave, &enclave); !why.empty())
        return fail(Errc::unsupported, kName + ": --enclave: " + why);
      fastdds_security::listen();
      fastdds_security::apply(&pq, enclave);
    }
    auto* factory = dds::DomainParticipantFactory::get_instance();
    participant_ = factory->create_participant(cfg.domain, pq);
    if (!participant_)
      return fail(Errc::io, said(kName + ": cannot create the participant (transport " + transport_ + ")"));
    dds::TypeSupport ts(new RawType(cfg.instances > 0, cfg.size));
    if (ts.register_type(participant_) != kOk) return fail(Errc::io, kName + ": cannot register the type");
    const std::string id = std::to_string(cfg.run_id);
    const std::string out = (cfg.role == Role::pub ? "rt/mwperf_data_" : "rt/mwperf_echo_") + id;
    const std::string in = (cfg.role == Role::pub ? "rt/mwperf_echo_" : "rt/mwperf_data_") + id;
    dds::Topic* t_out = participant_->create_topic(out, ts.get_type_name(), dds::TOPIC_QOS_DEFAULT);
    dds::Topic* t_in = participant_->create_topic(in, ts.get_type_name(), dds::TOPIC_QOS_DEFAULT);
    if (!t_out || !t_in) return fail(Errc::io, kName + ": cannot create the topics");

    depth_ = cfg.history_depth;
    durability_ = cfg.durability.empty() ? "volatile" : cfg.durability;
    const auto rel = reliability_ == "reliable" ? dds::RELIABLE_RELIABILITY_QOS : dds::BEST_EFFORT_RELIABILITY_QOS;
    const auto dur =
        durability_ == "transient-local" ? dds::TRANSIENT_LOCAL_DURABILITY_QOS : dds::VOLATILE_DURABILITY_QOS;
    const auto hist = cfg.keep_all ? dds::KEEP_ALL_HISTORY_QOS : dds::KEEP_LAST_HISTORY_QOS;
    const auto mem = rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;

    dds::DataWriterQos wq = dds::DATAWRITER_QOS_DEFAULT;
    wq.reliability().kind = rel;
    wq.reliability().max_blocking_time = Duration_t(0, uint32_t(kMaxBlockingMs) * 1000000u);
    wq.durability().kind = dur;
    wq.history().kind = hist;
    wq.history().depth = depth_;
    wq.endpoint().history_memory_policy = mem;
    wq.publish_mode().kind = cfg.async ? dds::ASYNCHRONOUS_PUBLISH_MODE : dds::SYNCHRONOUS_PUBLISH_MODE;
    dds::DataReaderQos rq = dds::DATAREADER_QOS_DEFAULT;
    rq.reliability().kind = rel;
    rq.durability().kind = dur;
    rq.history().kind = hist;
    rq.history().depth = depth_;
    rq.endpoint().history_memory_policy = mem;
    // Resource limits as the history asks: keep-last N per instance, keep-all
    // without a limit (Fast DDS's defaults would cap keep-all at 5000 samples
    // and 400 per instance, and keyed topics at 10 instances).
    for (auto* rl : {&wq.resource_limits(), &rq.resource_limits()}) {
      rl->max_instances = cfg.instances > 0 ? int32_t(cfg.instances) : 1;
      rl->max_samples_per_instance = cfg.keep_all ? dds::LENGTH_UNLIMITED : depth_;
      // instances x depth, computed wide: beyond an int32 it is no limit (it would wrap negative)
      const int64_t all = int64_t(rl->max_instances) * depth_;
      rl->max_samples = cfg.keep_all || all > INT32_MAX ? dds::LENGTH_UNLIMITED : int32_t(all);
      rl->allocated_samples = rl->max_samples == dds::LENGTH_UNLIMITED ? 100 : std::min(100, rl->max_samples);
    }
    // The reader's max_samples is no keep-last limit (its depth is) but the bound of the samples it holds
    // plus those it has not seen below them: at instances x depth, a gap wider than the depth (samples lost
    // on the way, or a secured writer's first ones sent before this reader had its keys) rejects every
    // sample after it, and a writer whose keep-last window is as deep never closes it (Fast DDS 2.9 at
    // sign and encrypt delivered 10 of 76,000). Fast DDS's own default (5000) then.
    if (auto& most = rq.resource_limits().max_samples; !cfg.keep_all && most != dds::LENGTH_UNLIMITED)
      most = std::max(most, kReaderSamples);
    dds::Publisher* pub = participant_->create_publisher(dds::PUBLISHER_QOS_DEFAULT);
    dds::Subscriber* sub = participant_->create_subscriber(dds::SUBSCRIBER_QOS_DEFAULT);
    if (!pub || !sub) return fail(Errc::io, kName + ": cannot create publisher/subscriber");
    writer_ = pub->create_datawriter(t_out, wq);
    reader_ = sub->create_datareader(t_in, rq);
    if (!writer_ || !reader_)
      return fail(Errc::io, said(kName + ": cannot create the writer or reader (QoS or permissions refused)"));
    if (receive_ == "waitset") {
      reader_->get_statuscondition().set_enabled_statuses(dds::StatusMask::data_available());
      waitset_.attach_condition(reader_->get_statuscondition());
      waitset_.attach_condition(guard_);
    }
    JsonObject j;
    j.str("transport", transport_);
    if (transport_ != "udp")
      j.num("shm_segment_size", fastdds_shm_segment_size(cfg.size))
          .num("shm_max_message_size", fastdds_shm_max_message_size(cfg.size));
    j.str("interface_whitelist", transport_ == "shm" || cfg.isolated ? "" : ip);
    j.boolean("isolated_namespace", cfg.isolated);
    if (transport_ != "shm") j.num("udp_receive_buffer", kUdpBuffer);  // what the UDPv4 transport asks of the kernel
    j.str("initial_peer", transport_ == "shm" ? "" : cfg.peer).str("reliability", reliability_);
    j.str("durability", durability_).str("history", cfg.keep_all ? "keep-all" : "keep-last:" + std::to_string(depth_));
    j.str("resource_limits", cfg.keep_all ? "unlimited" : "depth per instance");
    j.num("max_samples", writer_->get_qos().resource_limits().max_samples);  // as the writer has it (-1: no limit)
    j.num("reader_max_samples", reader_->get_qos().resource_limits().max_samples);
    j.num("max_blocking_ms", kMaxBlockingMs).num("linger_ms", linger_ns(cfg.role, reliability_) / 1000000);
    j.num("instances", cfg.instances).str("receive", receive_).boolean("async", cfg.async);
    j.str("history_memory_policy", "PREALLOCATED_WITH_REALLOC").str("topic_out", out).str("topic_in", in);
    j.str("security", secured(cfg.security) ? cfg.security : "none");
    if (secured(cfg.security)) j.raw("security_plugins", fastdds_security::config(cfg.security, enclave));
    j.num("domain", cfg.domain)
        .str("type",
             cfg.instances > 0 ? "mwperf::msg::dds_::KeyedUInt8MultiArray_" : "std_msgs::msg::dds_::UInt8MultiArray_");
    j.str("serialization", "from the core's buffer (one copy into the payload, as Cyclone)");
    // Defaults mwperf leaves to the version, as the library has them (a versions comparison names any that differ).
    const dds::DataWriterQos in_force = writer_->get_qos();
    j.num("heartbeat_period_ms", fastdds_compat::heartbeat_ms(in_force));
    j.str("data_sharing", in_force.data_sharing().kind() == dds::AUTO ? "auto"
                          : in_force.data_sharing().kind() == dds::ON ? "on"
                                                                      : "off");
    if (transport_ != "udp") j.num("shm_port_queue_capacity", shm_queue_);
    if (transport_ != "shm") j.num("udp_max_message_size", udp_max_message_);
    config_json_ = j.done();
    return Errc::ok;
  }

  Errc wait_matched(int64_t timeout_ns) override {
    const auto end = std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout_ns);
    for (;;) {
      dds::PublicationMatchedStatus pm;
      dds::SubscriptionMatchedStatus sm;
      writer_->get_publication_matched_status(pm);
      reader_->get_subscription_matched_status(sm);
      if (pm.current_count >= int32_t(cfg_.subscribers) && sm.current_count > 0) return Errc::ok;
      if (std::chrono::steady_clock::now() >= end)
        return fail(Errc::timeout, said(kName + ": no matching peer within " + std::to_string(timeout_ns / 1000000000) +
                                        " s (writer and echo reader)"));
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  Errc send(const uint8_t* data, size_t len) override {
    out_.out = data;
    out_.out_len = len;
    out_.key = next_key_;
    if (cfg_.instances > 0 && ++next_key_ == cfg_.instances) next_key_ = 0;
    const ReturnCode_t rc = writer_->write(&out_, rtps::InstanceHandle_t());
    if (rc == kOk) return Errc::ok;
    if (rc == kTimeout) return fail(Errc::timeout, kName + ": write timed out (history full)");
    return fail(Errc::io, kName + ": write failed (" + std::to_string(code(rc)) + ")");
  }

  Errc recv(const uint8_t** data, size_t* len, int64_t timeout_ns) override {
    for (int attempt = 0; attempt < 2; ++attempt) {
      dds::SampleInfo info;
      const ReturnCode_t rc = reader_->take_next_sample(&pulled_, &info);
      if (rc == kOk) {
        if (!info.valid_data) {
          --attempt;
          continue;
        }
        *data = pulled_.in.data();
        *len = pulled_.in.size();
        return Errc::ok;
      }
      if (rc != kNoData) return fail(Errc::io, kName + ": take failed");
      if (timeout_ns == 0 || attempt == 1) return Errc::timeout;
      if (receive_ != "waitset") return fail(Errc::io, kName + ": recv without a waitset (receive " + receive_ + ")");
      active_.clear();
      const Duration_t d = timeout_ns < 0
                               ? fastdds_compat::time_infinite()
                               : Duration_t(int32_t(timeout_ns / 1000000000), uint32_t(timeout_ns % 1000000000));
      if (waitset_.wait(active_, d) != kOk) return Errc::timeout;
      if (guard_.get_trigger_value()) {
        guard_.set_trigger_value(false);
        return Errc::timeout;
      }
    }
    return Errc::timeout;
  }

  Errc listen(Receiver* r) override {
    receiver_ = r;
    if (reader_->set_listener(this, dds::StatusMask::data_available()) != kOk)
      return fail(Errc::io, kName + ": cannot set the reader listener");
    on_data_available(reader_);  // what arrived before the listener was set
    return Errc::ok;
  }

  // On Fast DDS's receive thread: every sample available, straight to the core.
  void on_data_available(dds::DataReader* reader) override {
    // Fast DDS calls this holding the reader's lock: never wait for another lock here.
    drain_.run([&] {
      dds::SampleInfo info;
      while (reader->take_next_sample(&listened_, &info) == kOk)
        if (info.valid_data) receiver_->on_message(listened_.in.data(), listened_.in.size());
    });
  }

  bool can_wake() const override { return receive_ == "waitset"; }

  int64_t rejected() const override {
    dds::SampleRejectedStatus st;
    return reader_ != nullptr && reader_->get_sample_rejected_status(st) == kOk ? int64_t(st.total_count) : -1;
  }
  void wake() override { guard_.set_trigger_value(true); }

  void close() override {
    if (!participant_) return;
    // Fast DDS drops what its writer still holds when it is deleted (no linger of its own).
    if (const int64_t linger = linger_ns(cfg_.role, reliability_); writer_ && linger > 0)
      writer_->wait_for_acknowledgments(Duration_t(int32_t(linger / 1000000000), uint32_t(linger % 1000000000)));
    if (reader_) reader_->set_listener(nullptr);
    if (receive_ == "waitset" && reader_) {
      waitset_.detach_condition(reader_->get_statuscondition());
      waitset_.detach_condition(guard_);
    }
    participant_->delete_contained_entities();
    dds::DomainParticipantFactory::get_instance()->delete_participant(participant_);
    participant_ = nullptr;
    writer_ = nullptr;
    reader_ = nullptr;
  }

 private:
  // A failure's reason, with what Fast DDS logged last when the point is secured (a handshake's failure).
  std::string said(const std::string& reason) const {
    return secured(cfg_.security) ? fastdds_security::with(reason) : reason;
  }

  AdapterConfig cfg_;
  std::string config_json_, durability_;
  int depth_ = 10;
  dds::DomainParticipant* participant_ = nullptr;
  dds::DataWriter* writer_ = nullptr;
  dds::DataReader* reader_ = nullptr;
  dds::WaitSet waitset_;
  dds::GuardCondition guard_;
  dds::ConditionSeq active_;
  RawSample out_, pulled_, listened_;
  uint32_t next_key_ = 0;
  uint32_t shm_queue_ = 0, udp_max_message_ = 0;  // the transports' defaults in this version
  Receiver* receiver_ = nullptr;
  SerialDrain drain_;
};

}  // namespace

std::unique_ptr<Adapter> MWPERF_FASTDDS_MAKE() { return std::make_unique<FastddsAdapter>(); }

}  // namespace mwperf
