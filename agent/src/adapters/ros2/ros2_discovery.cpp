// ROS 2's participant of a discovery point (core/discovery.h), built into the
// ros2 adapters (Jazzy's and Kilted's wheels): one rcl context and node per
// participant (rmw_fastrtps_cpp gives each context a DDS participant of its
// own), T publishers and T subscriptions of std_msgs/msg/UInt8MultiArray, the
// topics /mwperf_disc_<run>_<t>. Profiles, as ROS 2 users set them (the
// record's config says which):
// - unicast: the Fast DDS XML profile the ros2 adapter confines its pairs with
//   (UDPv4 on 127.0.0.1 only, or in a namespace of a pair on its interfaces;
//   the peer address and this side's as initial peers for participant ids
//   0..N+9, no multicast); rcl's range SYSTEM_DEFAULT
//   leaves discovery to that profile.
// - default: what a ROS 2 Jazzy node does when nothing is set: automatic
//   discovery range SUBNET (SPDP multicast on every interface), on the namespace
//   pair's link only (never on a host's own NICs).
// - tuned: ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST with ROS_STATIC_PEERS naming
//   the other namespace (rcl's discovery options, as those variables set them):
//   no multicast, unicast to 127.0.0.1 and the named peers.
// Under default and tuned, Fast DDS's builtin transports are UDPv4 alone
// (FASTDDS_BUILTIN_TRANSPORTS): the namespaces of a pair stand for two hosts,
// whose discovery no shared memory may carry.
#include "adapters/ros2/ros2_discovery.h"

#include <rcl/error_handling.h>
#include <rcl/rcl.h>
#include <rmw/discovery_options.h>
#include <std_msgs/msg/u_int8_multi_array.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "adapters/ros2/ros2_profile.h"
#include "adapters/ros2/ros2_security.h"
#include "util/json.h"
#include "util/socket_util.h"

namespace mwperf {
namespace {

// What the participants of one process share: the environment rmw_fastrtps
// reads, the profile file, and Fast DDS's one loading of it (the first
// participant's, alone).
struct Shared {
  std::mutex m;
  int users = 0;
  bool created = false;  // a participant exists: Fast DDS has read its profile
  std::string path, xml;
  int fd = -1;
};
Shared& shared() {
  static Shared s;
  return s;
}

// Tearing down: what an rcl or rmw call returns changes nothing any more.
void done(rcl_ret_t) { rcl_reset_error(); }

const char* range_name(rmw_automatic_discovery_range_t r) {
  switch (r) {
    case RMW_AUTOMATIC_DISCOVERY_RANGE_SUBNET:
      return "SUBNET";
    case RMW_AUTOMATIC_DISCOVERY_RANGE_LOCALHOST:
      return "LOCALHOST";
    default:
      return "SYSTEM_DEFAULT (the Fast DDS profile confines it)";
  }
}

class Ros2Participant final : public DiscoveryParticipant {
 public:
  Ros2Participant(std::string name, std::string version, std::string rmw)
      : name_(std::move(name)), version_(std::move(version)), rmw_(std::move(rmw)) {}
  ~Ros2Participant() override { close(); }

  Errc open(const DiscoveryOptions& o) override {
    const bool lo = o.nic.empty() || o.nic == "lo";
    if (o.profile == "default" && lo)
      return fail(Errc::unsupported, name_ +
                                         ": --discovery default is ROS 2's SUBNET range (multicast on every "
                                         "interface): it runs on a namespace pair's link (--link netns), not on lo");
    if (rmw_ != "rmw_fastrtps_cpp")
      return fail(Errc::unsupported, name_ + ": discovery points run on rmw_fastrtps_cpp (rcl runs on " + rmw_ + ")");
    const std::string ip = lo ? "127.0.0.1" : interface_ipv4(o.nic);
    if (ip.empty()) return fail(Errc::unsupported, name_ + ": --nic " + o.nic + ": no IPv4 address on that interface");
    range_ = o.profile == "default" ? RMW_AUTOMATIC_DISCOVERY_RANGE_SUBNET
             : o.profile == "tuned" ? RMW_AUTOMATIC_DISCOVERY_RANGE_LOCALHOST
                                    : RMW_AUTOMATIC_DISCOVERY_RANGE_SYSTEM_DEFAULT;
    if (o.profile == "tuned" && !lo) peer_ = o.peer;  // on lo, LOCALHOST's own 127.0.0.1 is the peer

    Shared& s = shared();
    std::unique_lock<std::mutex> lock(s.m);
    if (s.users++ == 0) {
      if (const std::string why = configure(o, ip); !why.empty()) {
        --s.users;
        return fail(Errc::io, name_ + ": " + why);
      }
    }
    counted_ = true;
    Errc e = init(o);  // the contexts of one process one at a time (rcl_init is quick: no participant yet)
    if (e != Errc::ok) return e;
    if (s.created) lock.unlock();  // Fast DDS loads its profile once, at the first participant: that one alone
    e = create(o);
    if (e != Errc::ok) return e;
    if (lock.owns_lock()) s.created = true;
    if (lock.owns_lock()) lock.unlock();

    JsonObject j;
    j.str("rmw", rmw_).str("discovery_range", range_name(range_)).str("static_peers", peer_);
    j.str("transports", o.profile == "unicast" ? "udpv4 (the profile's)"
                                               : "udpv4 (FASTDDS_BUILTIN_TRANSPORTS=UDPv4: shared memory off)");
    j.str("multicast", o.profile == "default" ? "SPDP 239.255.0.1 on every interface (Fast DDS's default)" : "none");
    if (o.profile == "unicast")
      j.str("interface_whitelist", ip == "127.0.0.1" ? ip : "none (the namespace confines it)")
          .str("initial_peers", ip != o.peer ? o.peer + "," + ip : ip)
          .unum("max_initial_peers_range", o.participants + 10);
    if (o.hosted > 1) j.str("intraprocess_delivery", "off");
    j.str("fastdds_profile", s.xml).str("message_type", "std_msgs/msg/UInt8MultiArray");
    j.str("qos", "reliable, transient-local; writers keep-last 1, readers keep-all");
    config_ = j.done();
    return Errc::ok;
  }

  uint64_t matched() override {
    uint64_t n = 0;
    for (const rcl_subscription_t& sub : subs_) {
      size_t count = 0;
      if (rcl_subscription_get_publisher_count(&sub, &count) == RCL_RET_OK) n += count;
      rcl_reset_error();
    }
    return n;
  }

  void take(void (*seen)(void*, uint32_t, uint32_t), void* ctx) override {
    for (uint32_t t = 0; t < subs_.size(); ++t) {
      rmw_message_info_t info;
      while (rcl_take(&subs_[t], &in_, &info, nullptr) == RCL_RET_OK) {
        uint32_t from = UINT32_MAX;
        if (in_.data.size == 4) std::memcpy(&from, in_.data.data, 4);
        seen(ctx, t, from);
      }
      rcl_reset_error();
    }
  }

  std::string config_json() const override { return config_; }
  std::string version() const override { return version_; }

  void close() override {
    if (messages_) std_msgs__msg__UInt8MultiArray__fini(&in_);
    messages_ = false;
    for (rcl_publisher_t& p : pubs_) done(rcl_publisher_fini(&p, &node_));
    for (rcl_subscription_t& sub : subs_) done(rcl_subscription_fini(&sub, &node_));
    pubs_.clear();
    subs_.clear();
    if (node_inited_) done(rcl_node_fini(&node_));
    node_inited_ = false;
    if (inited_) {
      done(rcl_shutdown(&context_));
      done(rcl_context_fini(&context_));
    }
    inited_ = false;
    rcl_reset_error();
    if (!counted_) return;
    counted_ = false;
    Shared& s = shared();
    const std::lock_guard<std::mutex> lock(s.m);
    if (--s.users == 0) ros2_profile::remove(&s.path, &s.fd);
  }

 private:
  // The process's environment for rmw_fastrtps and its DDS, and the profile file where one is wanted: "" or why not.
  std::string configure(const DiscoveryOptions& o, const std::string& ip) {
    for (const char* v : {"ROS_AUTOMATIC_DISCOVERY_RANGE", "ROS_STATIC_PEERS", "ROS_LOCALHOST_ONLY",
                          "ROS_DISCOVERY_SERVER", "ROS_SUPER_CLIENT", "RMW_FASTRTPS_USE_QOS_FROM_XML",
                          "FASTRTPS_DEFAULT_PROFILES_FILE", "FASTDDS_DEFAULT_PROFILES_FILE"})
      unsetenv(v);
    ros2_security::apply(AdapterConfig{});  // none: whatever the shell had set
    setenv("RMW_FASTRTPS_PUBLICATION_MODE", "SYNCHRONOUS", 1);
    setenv("FASTDDS_BUILTIN_TRANSPORTS", "UDPv4", 1);
    ros2_profile::Confinement c;
    c.intraprocess_off = o.hosted > 1;  // else the participants of one process match in memory
    if (o.profile == "unicast") {
      c.ip = ip;
      c.peers = {o.peer};
      if (ip != o.peer) c.peers.push_back(ip);  // the participants on this side of a link, too
      c.peers_range = o.participants + 10;
      // Fast DDS 3.2 opens no UDP socket when the whitelist names a veth inside a network namespace (as 2.9
      // does: the fastdds adapter): there the namespace confines the traffic.
      c.whitelist = ip == "127.0.0.1";
    } else if (!c.intraprocess_off) {
      shared().xml.clear();
      return "";  // the rmw's and Fast DDS's own settings, nothing of ours
    }
    shared().xml = ros2_profile::xml(c);
    return ros2_profile::write(shared().xml, &shared().path, &shared().fd);
  }

  std::string rcl_error(const std::string& what) {
    std::string e = name_ + ": " + what + ": " + rcl_get_error_string().str;
    rcl_reset_error();
    return e;
  }

  // The context, with its discovery options.
  Errc init(const DiscoveryOptions& o) {
    rcl_allocator_t alloc = rcl_get_default_allocator();
    rcl_init_options_t io = rcl_get_zero_initialized_init_options();
    if (rcl_init_options_init(&io, alloc) != RCL_RET_OK) return fail(Errc::io, rcl_error("init options"));
    rmw_init_options_t* rio = rcl_init_options_get_rmw_init_options(&io);
    rcl_ret_t rc = rcl_init_options_set_domain_id(&io, o.domain);
    if (rc == RCL_RET_OK && !peer_.empty()) {
      done(rmw_discovery_options_fini(&rio->discovery_options));
      rio->discovery_options = rmw_get_zero_initialized_discovery_options();
      rc = rmw_discovery_options_init(&rio->discovery_options, 1, &alloc);
      if (rc == RMW_RET_OK)
        std::snprintf(rio->discovery_options.static_peers[0].peer_address,
                      RMW_DISCOVERY_OPTIONS_STATIC_PEERS_MAX_LENGTH, "%s", peer_.c_str());
    }
    rio->discovery_options.automatic_discovery_range = range_;
    if (rc == RCL_RET_OK) rc = rcl_init(0, nullptr, &io, &context_);
    inited_ = rc == RCL_RET_OK;
    const std::string why = inited_ ? "" : rcl_error("rcl_init");
    done(rcl_init_options_fini(&io));
    return inited_ ? Errc::ok : fail(Errc::io, why);
  }

  // The node (rmw_fastrtps's participant with it), the T publishers and subscriptions, each publisher's sample.
  Errc create(const DiscoveryOptions& o) {
    const std::string node = "mwperf_disc_" + std::to_string(o.run_id) + "_" + std::to_string(o.index);
    rcl_node_options_t no = rcl_node_get_default_options();
    if (rcl_node_init(&node_, node.c_str(), "", &context_, &no) != RCL_RET_OK) return fail(Errc::io, rcl_error("node"));
    node_inited_ = true;
    rmw_qos_profile_t q = rmw_qos_profile_default;
    q.reliability = RMW_QOS_POLICY_RELIABILITY_RELIABLE;
    q.durability = RMW_QOS_POLICY_DURABILITY_TRANSIENT_LOCAL;
    q.history = RMW_QOS_POLICY_HISTORY_KEEP_LAST;
    q.depth = 1;
    rcl_publisher_options_t po = rcl_publisher_get_default_options();
    po.qos = q;
    rcl_subscription_options_t so = rcl_subscription_get_default_options();
    so.qos = q;
    // Keep-all: one topic is one instance for every writer, and keep-last 1 would keep the newest only.
    so.qos.history = RMW_QOS_POLICY_HISTORY_KEEP_ALL;
    so.qos.depth = 0;
    const auto* ts = ROSIDL_GET_MSG_TYPE_SUPPORT(std_msgs, msg, UInt8MultiArray);
    std::memset(&in_, 0, sizeof in_);  // the generated __init leaves data_offset uninitialised
    std_msgs__msg__UInt8MultiArray__init(&in_);
    messages_ = true;
    std_msgs__msg__UInt8MultiArray out;
    std::memset(&out, 0, sizeof out);
    uint8_t index[4];
    std::memcpy(index, &o.index, 4);
    out.data.data = index;
    out.data.size = out.data.capacity = 4;
    pubs_.reserve(o.topics);
    subs_.reserve(o.topics);
    for (uint32_t t = 0; t < o.topics; ++t) {
      const std::string topic = "/" + discovery_topic(o.run_id, t).substr(3);  // rt/NAME is ROS 2's /NAME
      pubs_.push_back(rcl_get_zero_initialized_publisher());
      if (rcl_publisher_init(&pubs_.back(), &node_, ts, topic.c_str(), &po) != RCL_RET_OK) {
        pubs_.pop_back();
        return fail(Errc::io, rcl_error(("publisher " + topic).c_str()));
      }
      subs_.push_back(rcl_get_zero_initialized_subscription());
      if (rcl_subscription_init(&subs_.back(), &node_, ts, topic.c_str(), &so) != RCL_RET_OK) {
        subs_.pop_back();
        return fail(Errc::io, rcl_error(("subscription " + topic).c_str()));
      }
      if (rcl_publish(&pubs_.back(), &out, nullptr) != RCL_RET_OK)
        return fail(Errc::io, rcl_error(("publish " + topic).c_str()));
    }
    return Errc::ok;
  }

  std::string name_, version_, rmw_, peer_, config_;
  rmw_automatic_discovery_range_t range_ = RMW_AUTOMATIC_DISCOVERY_RANGE_SYSTEM_DEFAULT;
  rcl_context_t context_ = rcl_get_zero_initialized_context();
  rcl_node_t node_ = rcl_get_zero_initialized_node();
  std::vector<rcl_publisher_t> pubs_;
  std::vector<rcl_subscription_t> subs_;
  std_msgs__msg__UInt8MultiArray in_;
  bool inited_ = false, node_inited_ = false, messages_ = false, counted_ = false;
};

}  // namespace

std::unique_ptr<DiscoveryParticipant> make_ros2_participant(const std::string& name, const std::string& version,
                                                            const std::string& rmw) {
  return std::make_unique<Ros2Participant>(name, version, rmw);
}

}  // namespace mwperf
