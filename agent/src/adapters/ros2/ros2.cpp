// ROS 2 through the rcl C API (what rclcpp sits on), with the rmw rcl loads:
// RMW_IMPLEMENTATION names it, as in any ROS 2 program, and this adapter links
// none of its own. rcl refuses an rmw it cannot load when it is loaded itself,
// before main (ROS 2's rmw_implementation: the library is not installed; the
// PyPI wheels' rcl, bound to rmw_fastrtps_cpp: any other name), with its
// reason on stderr, which the agent's `list` passes on. The record names the
// rmw and the versions of rcl, the rmw (its package.xml in the ament index)
// and its DDS (the library loaded in the process). Messages are
// std_msgs/msg/UInt8MultiArray: the core's bytes are its `data` (published
// from the core's buffer without a copy by mwperf; rmw serializes them),
// taken with rcl_take as a ROS node would (rmw deserializes into the message).
//
// Receiving is by rcl wait set on the agent's thread, as rclcpp's executors
// do (rcl has no listener delivery); --wait spin polls rcl_take instead.
//
// Confinement: the rmw is told where it may go before rcl_init. Fast DDS
// (rmw_fastrtps_cpp): an XML profile of ours (builtin transports off, UDPv4
// whitelisted to the --nic address with unicast peers, and/or shared memory),
// with rcl's automatic discovery range left to that profile. Cyclone DDS
// (rmw_cyclonedds_cpp): CYCLONEDDS_URI on the interface, multicast off, unicast
// peer. Any other installed rmw: ROS 2's own rmw-independent confinement
// (automatic discovery range LOCALHOST) on one host; refused across a link.
//
// Discovery points (`mwperf-agent discover`): ros2_discovery.cpp's participant.
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <rcl/error_handling.h>
#include <rcl/rcl.h>
#include <rcl/version.h>
#include <rmw/rmw.h>
#include <std_msgs/msg/u_int8_multi_array.h>
#include <unistd.h>

#include <fastcdr/config.h>  // the wheel's Fast CDR and Fast DDS (its include folder comes first)

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#define MWPERF_FASTDDS_COMPAT_VERSION_ONLY  // the rmw's Fast DDS: its library's name and version (2.x or 3.x)
#include "adapters/fastdds/fastdds_compat.h"
#include "adapters/fastdds/fastdds_shm.h"
#include "adapters/ros2/ament_index.h"
#include "adapters/ros2/ros2_discovery.h"
#include "adapters/ros2/ros2_profile.h"
#include "adapters/ros2/ros2_security.h"
#include "core/adapter.h"
#include "util/json.h"
#include "util/loaded_libs.h"
#include "util/socket_util.h"

// The adapter this build is (wheels.cmake: ros2 on Jazzy's wheels, ros2-kilted on Kilted's); its messages start so.
#ifndef MWPERF_ROS2_NAME
#define MWPERF_ROS2_NAME "ros2"
#define MWPERF_ROS2_MAKE make_ros2_adapter
#endif

namespace mwperf {
namespace {
const std::string kName = MWPERF_ROS2_NAME;

constexpr size_t kMaxSize = 16u << 20;

Description describe() {
  Description d;
  d.max_size = kMaxSize;
  d.size_note = "mwperf's cap, not the rmw's (Fast DDS fragments large samples): the reference sweep's largest message";
  d.transports = "udp,shm";
  d.transport = "shm+udp";
  d.reliabilities = "reliable,best-effort";
  d.reliability = "reliable";
  d.honours = "history,durability,nic,rtps";
  d.remote_transport = "udp";  // its Fast DDS default (shm+udp) would keep to shared memory on one host
  // Fast DDS's segments, the wait segments of the LTTng-UST tracing library
  // rcl loads, and the Fast DDS profile each agent writes (open(), below)
  d.leftovers = MWPERF_FASTDDS_SHM_LEFTOVERS ",/dev/shm/lttng-ust-wait-*,/tmp/mwperf-ros2-*";
  d.receives = d.receive = "waitset";
  d.securities = ros2_security::levels();
  d.security_note = ros2_security::note(fastdds_compat::kBuiltVersion);
  d.discoveries = kDiscoveryProfiles;  // ros2_discovery.cpp: mwperf's profile, SUBNET, LOCALHOST + static peers
  d.notes =
      "std_msgs/msg/UInt8MultiArray: 16 B of CDR (encapsulation, empty layout, data_offset, length) "
      "before the payload";
  return d;
}

// The identifier of the rmw rcl runs on, asked of whatever rcl loaded into the
// process (rmw_implementation's proxy, or the rmw the wheels' rcl is bound to):
// this adapter links no rmw of its own.
const char* rmw_name() {
  using Get = const char* (*)();
  static const Get get = reinterpret_cast<Get>(dlsym(RTLD_DEFAULT, "rmw_get_implementation_identifier"));
  return get != nullptr ? get() : "unknown";
}

using ament_index::installed_rmws;
using ament_index::package_version;
using ament_index::rmw_prefix;

// The Fast DDS and Fast CDR loaded in the process ("" when none), the wheel's
// headers' full version when it agrees (loaded_libs.h).
std::string fastdds_version() { return loaded_version(fastdds_compat::kLibrary, fastdds_compat::kBuiltVersion); }
std::string fastcdr_version() { return loaded_version("libfastcdr.so", FASTCDR_VERSION_STR); }

// Tearing down: what an rcl call returns changes nothing any more.
void teardown(rcl_ret_t) { rcl_reset_error(); }

std::string rcl_error(const char* what) {
  std::string e = kName + ": " + what + ": " + rcl_get_error_string().str;
  rcl_reset_error();
  return e;
}

class Ros2Adapter final : public Adapter {
 public:
  ~Ros2Adapter() override { close(); }
  const Description& description() const override {
    static const Description d = describe();
    return d;
  }
  std::string version() const override {
    std::string v = std::string("rcl ") + RCL_VERSION_STR + ", " + rmw_name();
    const std::string rmw_version = package_version(prefix_, rmw_name());
    if (!rmw_version.empty()) v += " " + rmw_version;
    const std::string dds = fastdds_version(), cyclone = loaded_version("libddsc.so");
    if (!dds.empty()) v += ", Fast DDS " + dds;
    if (!cyclone.empty()) v += ", Cyclone DDS " + cyclone;
    return v;
  }
  // rcl, the rmw rcl runs on and its DDS: what is loaded, not what was built against.
  std::string versions() const override {
    JsonObject j;
    j.str("rcl", RCL_VERSION_STR).str("rmw", rmw_name());
    j.str("rmw_version", package_version(prefix_, rmw_name()));
    const std::string dds = fastdds_version(), cdr = fastcdr_version(), cyclone = loaded_version("libddsc.so");
    if (!dds.empty()) j.str("fastdds", dds);
    if (!cdr.empty()) j.str("fastcdr", cdr);
    if (!cyclone.empty()) j.str("cyclonedds", cyclone);
    return j.done();
  }
  std::string effective_config() const override { return config_json_; }
  std::unique_ptr<DiscoveryParticipant> make_participant() const override {
    return make_ros2_participant(kName, version(), rmw_name());
  }

  Errc open(const AdapterConfig& cfg) override {
    transport_ = cfg.transport.empty() ? "shm+udp" : cfg.transport;
    reliability_ = cfg.reliability.empty() ? "reliable" : cfg.reliability;
    receive_ = "waitset";
    subscribers_ = cfg.subscribers;
    const char* wanted = std::getenv("RMW_IMPLEMENTATION");
    rmw_ = wanted && *wanted ? wanted : rmw_name();
    if (rmw_ != rmw_name())  // rcl checks this when it is loaded; said here too, should it not
      return fail(Errc::unsupported, kName + ": RMW_IMPLEMENTATION=" + rmw_ + ": rcl runs on " + rmw_name() +
                                         " (installed: " + installed_rmws() + ")");
    prefix_ = rmw_prefix(rmw_);
    known_ = rmw_ == "rmw_fastrtps_cpp" || rmw_ == "rmw_cyclonedds_cpp";
    if (!known_ && cfg.peer != "127.0.0.1")
      return fail(Errc::unsupported, kName + ": " + rmw_ +
                                         ": only on one host (mwperf keeps an rmw it has no "
                                         "configuration for on this host with ROS 2's LOCALHOST discovery range)");
    if (rmw_ != "rmw_fastrtps_cpp" && transport_ != "udp")
      return fail(Errc::unsupported,
                  kName + ": " + rmw_ + ": --transport udp only (shm selects Fast DDS's transports)");
    const std::string ip = cfg.nic.empty() || cfg.nic == "lo" ? "127.0.0.1" : interface_ipv4(cfg.nic);
    if (ip.empty())
      return fail(Errc::unsupported, kName + ": --nic " + cfg.nic + ": no IPv4 address on that interface");
    const Errc confined = confine(cfg, ip);
    if (confined != Errc::ok) return confined;
    if (const std::string why = ros2_security::apply(cfg); !why.empty())
      return fail(Errc::unsupported, kName + ": " + why);

    rcl_init_options_t io = rcl_get_zero_initialized_init_options();
    if (rcl_init_options_init(&io, alloc_) != RCL_RET_OK) return fail(Errc::io, rcl_error("init options"));
    if (rcl_init_options_set_domain_id(&io, cfg.domain) != RCL_RET_OK) return fail(Errc::io, rcl_error("domain"));
    // The profile above decides where Fast DDS goes: rcl's LOCALHOST range
    // would add Fast DDS's builtin transports on every interface.
    // Another installed rmw is kept on this host by ROS 2's own setting.
    rcl_init_options_get_rmw_init_options(&io)->discovery_options.automatic_discovery_range =
        known_ ? RMW_AUTOMATIC_DISCOVERY_RANGE_SYSTEM_DEFAULT : RMW_AUTOMATIC_DISCOVERY_RANGE_LOCALHOST;
    const rcl_ret_t init = rcl_init(0, nullptr, &io, &context_);
    teardown(rcl_init_options_fini(&io));
    if (init != RCL_RET_OK) return fail(Errc::io, rcl_error("rcl_init"));
    inited_ = true;
    const std::string id = std::to_string(cfg.run_id);
    const std::string node = std::string("mwperf_") + (cfg.role == Role::pub ? "pub_" : "sub_") + id;
    rcl_node_options_t no = rcl_node_get_default_options();
    if (rcl_node_init(&node_, node.c_str(), "", &context_, &no) != RCL_RET_OK) return fail(Errc::io, rcl_error("node"));

    rmw_qos_profile_t q = rmw_qos_profile_default;
    q.reliability =
        reliability_ == "reliable" ? RMW_QOS_POLICY_RELIABILITY_RELIABLE : RMW_QOS_POLICY_RELIABILITY_BEST_EFFORT;
    depth_ = cfg.history_depth;
    q.history = cfg.keep_all ? RMW_QOS_POLICY_HISTORY_KEEP_ALL : RMW_QOS_POLICY_HISTORY_KEEP_LAST;
    q.depth = cfg.keep_all ? 0 : size_t(depth_);
    durability_ = cfg.durability.empty() ? "volatile" : cfg.durability;
    q.durability = durability_ == "transient-local" ? RMW_QOS_POLICY_DURABILITY_TRANSIENT_LOCAL
                                                    : RMW_QOS_POLICY_DURABILITY_VOLATILE;
    const auto* ts = ROSIDL_GET_MSG_TYPE_SUPPORT(std_msgs, msg, UInt8MultiArray);
    const std::string out = std::string("/mwperf_") + (cfg.role == Role::pub ? "data_" : "echo_") + id;
    const std::string in = std::string("/mwperf_") + (cfg.role == Role::pub ? "echo_" : "data_") + id;
    rcl_publisher_options_t po = rcl_publisher_get_default_options();
    po.qos = q;
    if (rcl_publisher_init(&pub_, &node_, ts, out.c_str(), &po) != RCL_RET_OK)
      return fail(Errc::io, rcl_error("publisher"));
    rcl_subscription_options_t so = rcl_subscription_get_default_options();
    so.qos = q;
    if (rcl_subscription_init(&sub_, &node_, ts, in.c_str(), &so) != RCL_RET_OK)
      return fail(Errc::io, rcl_error("subscription"));
    rcl_guard_condition_options_t go = rcl_guard_condition_get_default_options();
    if (rcl_guard_condition_init(&guard_, &context_, go) != RCL_RET_OK) return fail(Errc::io, rcl_error("guard"));
    if (rcl_wait_set_init(&waitset_, 1, 1, 0, 0, 0, 0, &context_, alloc_) != RCL_RET_OK)
      return fail(Errc::io, rcl_error("wait set"));
    // The generated __init leaves primitive fields without a default (data_offset)
    // uninitialised: zero the structs first.
    std::memset(&out_, 0, sizeof out_);
    std::memset(&in_, 0, sizeof in_);
    std_msgs__msg__UInt8MultiArray__init(&out_);
    std_msgs__msg__UInt8MultiArray__init(&in_);
    messages_ = true;

    JsonObject j;
    j.str("rmw", rmw_name()).str("rmw_requested", rmw_).str("rcl", RCL_VERSION_STR);
    j.str("rmw_prefix", prefix_).str("message_type", "std_msgs/msg/UInt8MultiArray");
    j.str("transport", transport_).str("reliability", reliability_).str("durability", durability_);
    if (rmw_ == "rmw_fastrtps_cpp" && transport_ != "udp")
      j.num("shm_segment_size", fastdds_shm_segment_size(cfg.size))
          .num("shm_max_message_size", fastdds_shm_max_message_size(cfg.size));
    j.str("history", cfg.keep_all ? "keep-all" : "keep-last:" + std::to_string(depth_));
    linger_ = linger_ns(cfg.role, reliability_);
    j.str("receive", receive_).str("topic_out", out).str("topic_in", in).num("domain", cfg.domain);
    j.str("security", secured(cfg.security) ? cfg.security : "none");
    j.num("linger_ms", linger_ / 1000000);
    if (rmw_ == "rmw_fastrtps_cpp") j.str("publication_mode", "SYNCHRONOUS");
    j.str("discovery_range", known_ ? "system default (the profile confines it)" : "localhost");
    j.str("confinement", known_ ? confinement_ : "ROS 2 automatic discovery range LOCALHOST");
    config_json_ = j.done();
    return Errc::ok;
  }

  Errc wait_matched(int64_t timeout_ns) override {
    const auto end = std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout_ns);
    for (;;) {
      size_t subs = 0, pubs = 0;
      if (rcl_publisher_get_subscription_count(&pub_, &subs) != RCL_RET_OK ||
          rcl_subscription_get_publisher_count(&sub_, &pubs) != RCL_RET_OK)
        return fail(Errc::io, rcl_error("matched count"));
      if (subs >= subscribers_ && pubs > 0) return Errc::ok;
      if (std::chrono::steady_clock::now() >= end)
        return fail(Errc::timeout, kName + ": no matching peer within " + std::to_string(timeout_ns / 1000000000) +
                                       " s (publisher and echo subscription)");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  Errc send(const uint8_t* data, size_t len) override {
    // The message's data points at the core's buffer for the call (rmw
    // serializes it before rcl_publish returns) and is put back after.
    out_.data.data = const_cast<uint8_t*>(data);
    out_.data.size = out_.data.capacity = len;
    const rcl_ret_t rc = rcl_publish(&pub_, &out_, nullptr);
    out_.data.data = nullptr;
    out_.data.size = out_.data.capacity = 0;
    if (rc == RCL_RET_OK) return Errc::ok;
    return fail(Errc::io, rcl_error("publish"));
  }

  Errc recv(const uint8_t** data, size_t* len, int64_t timeout_ns) override {
    for (int attempt = 0; attempt < 2; ++attempt) {
      rmw_message_info_t info;
      const rcl_ret_t rc = rcl_take(&sub_, &in_, &info, nullptr);
      if (rc == RCL_RET_OK) {
        *data = in_.data.data;
        *len = in_.data.size;
        return Errc::ok;
      }
      if (rc != RCL_RET_SUBSCRIPTION_TAKE_FAILED) return fail(Errc::io, rcl_error("take"));
      if (timeout_ns == 0 || attempt == 1) return Errc::timeout;
      if (rcl_wait_set_clear(&waitset_) != RCL_RET_OK ||
          rcl_wait_set_add_subscription(&waitset_, &sub_, nullptr) != RCL_RET_OK ||
          rcl_wait_set_add_guard_condition(&waitset_, &guard_, nullptr) != RCL_RET_OK)
        return fail(Errc::io, rcl_error("wait set"));
      const rcl_ret_t w = rcl_wait(&waitset_, timeout_ns < 0 ? -1 : timeout_ns);
      if (w == RCL_RET_TIMEOUT) return Errc::timeout;
      if (w != RCL_RET_OK) return fail(Errc::io, rcl_error("wait"));
      if (waitset_.guard_conditions[0] != nullptr) return Errc::timeout;  // woken
    }
    return Errc::timeout;
  }

  bool can_wake() const override { return true; }
  void wake() override {
    if (inited_) teardown(rcl_trigger_guard_condition(&guard_));
  }

  void close() override {
    if (messages_) {
      std_msgs__msg__UInt8MultiArray__fini(&out_);
      std_msgs__msg__UInt8MultiArray__fini(&in_);
      messages_ = false;
    }
    if (inited_) {
      // Acknowledged before the writer goes (rmw_fastrtps drops what it still holds).
      if (linger_ > 0) teardown(rcl_publisher_wait_for_all_acked(&pub_, linger_));
      teardown(rcl_wait_set_fini(&waitset_));
      teardown(rcl_guard_condition_fini(&guard_));
      teardown(rcl_publisher_fini(&pub_, &node_));
      teardown(rcl_subscription_fini(&sub_, &node_));
      teardown(rcl_node_fini(&node_));
      teardown(rcl_shutdown(&context_));
      teardown(rcl_context_fini(&context_));
      inited_ = false;
    }
    ros2_profile::remove(&profile_, &profile_fd_);
  }

 private:
  // Writes what keeps the rmw on this machine (or on the link) and points it there.
  Errc confine(const AdapterConfig& cfg, const std::string& ip) {
    const std::string nic = cfg.nic.empty() ? "lo" : cfg.nic;
    setenv("CYCLONEDDS_URI",
           ("<CycloneDDS><Domain id=\"any\"><General><Interfaces><NetworkInterface name=\"" + nic +
            "\"/></Interfaces><AllowMulticast>false</AllowMulticast></General><Discovery><ParticipantIndex>auto"
            "</ParticipantIndex><MaxAutoParticipantIndex>50</MaxAutoParticipantIndex><Peers><Peer address=\"" +
            cfg.peer + "\"/></Peers></Discovery></Domain></CycloneDDS>")
               .c_str(),
           1);
    ros2_profile::Confinement c;
    c.ip = ip;
    c.peers = {cfg.peer};
    c.shm = transport_ != "udp";
    c.udp = transport_ != "shm";
    c.whitelist = !cfg.isolated;
    c.size = cfg.size;
    const std::string xml = ros2_profile::xml(c);
    if (const std::string why = ros2_profile::write(xml, &profile_, &profile_fd_); !why.empty())
      return fail(Errc::io, kName + ": " + why);
    unsetenv("ROS_AUTOMATIC_DISCOVERY_RANGE");
    unsetenv("ROS_LOCALHOST_ONLY");
    unsetenv("RMW_FASTRTPS_USE_QOS_FROM_XML");
    // rmw_fastrtps's default, said: a versions comparison compares one publication mode.
    setenv("RMW_FASTRTPS_PUBLICATION_MODE", "SYNCHRONOUS", 1);
    confinement_ = rmw_ == "rmw_cyclonedds_cpp" ? "CYCLONEDDS_URI: " + nic + ", no multicast, peer " + cfg.peer
                                                : "Fast DDS profile: " + xml;
    return Errc::ok;
  }

  rcl_allocator_t alloc_ = rcl_get_default_allocator();
  rcl_context_t context_ = rcl_get_zero_initialized_context();
  rcl_node_t node_ = rcl_get_zero_initialized_node();
  rcl_publisher_t pub_ = rcl_get_zero_initialized_publisher();
  rcl_subscription_t sub_ = rcl_get_zero_initialized_subscription();
  rcl_guard_condition_t guard_ = rcl_get_zero_initialized_guard_condition();
  rcl_wait_set_t waitset_ = rcl_get_zero_initialized_wait_set();
  std_msgs__msg__UInt8MultiArray out_, in_;
  bool inited_ = false, messages_ = false;
  int64_t linger_ = 0;
  int depth_ = 10;
  size_t subscribers_ = 1;
  std::string rmw_, durability_, config_json_, profile_, confinement_, prefix_ = MWPERF_ROS2_PREFIX;
  int profile_fd_ = -1;  // profile_ held open while it is in use
  bool known_ = true;    // an rmw mwperf writes a confinement for (Fast DDS, Cyclone DDS)
};

}  // namespace

std::unique_ptr<Adapter> MWPERF_ROS2_MAKE() { return std::make_unique<Ros2Adapter>(); }

}  // namespace mwperf
