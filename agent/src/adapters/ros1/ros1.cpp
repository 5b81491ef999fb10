// ROS 1 (roscpp 1.15, Debian) over TCPROS, with the rosmaster the controller
// starts for the point (the description's service "rosmaster"; the agents
// find it through ROS_MASTER_URI).
//
// Messages are a type of ours that is std_msgs/UInt8MultiArray on the wire
// (same MD5, data type and definition; an empty layout): serialized straight
// from the core's buffer and deserialized straight into the adapter's, one
// copy each way, as roscpp does for any message.
//
// ROS 1 has no QoS but its queues: keep-last:N is the publisher's and the
// subscriber's queue_size (the oldest message goes when one is full; both
// sides), keep-all an unbounded queue (0); transient-local is a latched topic.
// Reliability is TCP's. `tcpros` is roscpp's default (Nagle on),
// `tcpros-nodelay` asks for TCP_NODELAY (TransportHints::tcpNoDelay).
//
// Receiving: `waitset` (default) calls the subscription's own callback queue
// from the agent's thread (callOne), `listener` runs the callback on roscpp's
// network thread as the message is read.
//
// publish() only queues the message for roscpp's network thread, which
// throws away what it has not written when the node goes. So a publisher
// that closes first sends an empty message (the core never sends one) and
// waits for the subscriber to echo it: TCP keeps order, so everything
// published before it has then arrived.
#include <ros/callback_queue.h>
#include <ros/common.h>
#include <ros/console.h>
#include <ros/ros.h>
#include <std_msgs/UInt8MultiArray.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "adapters/ros1/ros1_discovery.h"
#include "core/adapter.h"
#include "util/json.h"
#include "util/socket_util.h"

namespace mwperf {

// The core's bytes as std_msgs/UInt8MultiArray: a view to send, a sink to receive into.
struct RosBytes {
  const uint8_t* data = nullptr;
  uint32_t len = 0;
  uint8_t* sink = nullptr;
  size_t cap = 0;
  bool too_big = false;
};

}  // namespace mwperf

namespace ros {
namespace message_traits {
template <>
struct MD5Sum<mwperf::RosBytes> {
  static const char* value() { return MD5Sum<std_msgs::UInt8MultiArray>::value(); }
  static const char* value(const mwperf::RosBytes&) { return value(); }
};
template <>
struct DataType<mwperf::RosBytes> {
  static const char* value() { return DataType<std_msgs::UInt8MultiArray>::value(); }
  static const char* value(const mwperf::RosBytes&) { return value(); }
};
template <>
struct Definition<mwperf::RosBytes> {
  static const char* value() { return Definition<std_msgs::UInt8MultiArray>::value(); }
  static const char* value(const mwperf::RosBytes&) { return value(); }
};
template <>
struct IsFixedSize<mwperf::RosBytes> : FalseType {};
template <>
struct IsSimple<mwperf::RosBytes> : FalseType {};
template <>
struct HasHeader<mwperf::RosBytes> : FalseType {};
}  // namespace message_traits

namespace serialization {
template <>
struct Serializer<mwperf::RosBytes> {
  template <typename Stream>
  static void write(Stream& s, const mwperf::RosBytes& m) {
    s.next(uint32_t(0));  // layout.dim: none
    s.next(uint32_t(0));  // layout.data_offset
    s.next(m.len);
    if (m.len) std::memcpy(s.advance(m.len), m.data, m.len);
  }
  template <typename Stream>
  static void read(Stream& s, mwperf::RosBytes& m) {
    uint32_t dims = 0, offset = 0, n = 0;
    s.next(dims);
    for (uint32_t i = 0; i < dims; ++i) {  // a UInt8MultiArray from elsewhere may carry a layout
      uint32_t label = 0, size = 0, stride = 0;
      s.next(label);
      s.advance(label);
      s.next(size);
      s.next(stride);
    }
    s.next(offset);
    s.next(n);
    const uint8_t* src = s.advance(n);
    m.len = n;
    m.too_big = n > m.cap;
    if (!m.too_big && n > 0) std::memcpy(m.sink, src, n);
    m.data = m.sink;
  }
  static uint32_t serializedLength(const mwperf::RosBytes& m) { return 12u + m.len; }
};
}  // namespace serialization
}  // namespace ros

namespace mwperf {
namespace {

constexpr size_t kMaxSize = 16u << 20;
constexpr int kLingerMs = 3000;

Description describe() {
  Description d;
  d.max_size = kMaxSize;
  d.size_note = "mwperf's cap; roscpp itself refuses a message over 1 GB";
  d.transports = "tcpros,tcpros-nodelay";
  d.transport = "tcpros";
  d.reliabilities = d.reliability = "reliable";
  d.honours = "history,durability,nic";
  d.in_order = true;  // one TCP connection per publisher; roscpp's queues drop their oldest
  d.receives = "waitset,listener";
  d.receive = "waitset";
  d.service = "rosmaster";
  d.max_readers_per_process = 1;
  d.readers_note = "roscpp is one node per process; its subscribers of a topic share one connection";
  d.discoveries = "unicast";  // the rosmaster on 127.0.0.1 (ros1_discovery.cpp)
  d.notes =
      "std_msgs/UInt8MultiArray on the wire: 12 B (empty layout, data_offset, length) before the payload; "
      "keep-last:N is roscpp's queue_size, keep-all an unbounded queue, transient-local a latched topic";
  return d;
}

// Runs a callback as soon as roscpp queues it: on roscpp's network thread,
// right after the message was read (listener delivery).
class InlineQueue final : public ros::CallbackQueueInterface {
 public:
  void addCallback(const ros::CallbackInterfacePtr& callback, uint64_t) override {
    while (callback->call() == ros::CallbackInterface::TryAgain) {
    }
  }
  void removeByID(uint64_t) override {}
};

// roscpp is one node per process (the unit tests open both roles in one).
std::mutex g_init_mu;
int g_users = 0;

class Ros1Adapter final : public Adapter {
 public:
  ~Ros1Adapter() override { close(); }
  const Description& description() const override {
    static const Description d = describe();
    return d;
  }
  std::string version() const override {
    return "roscpp " + std::to_string(ROS_VERSION_MAJOR) + "." + std::to_string(ROS_VERSION_MINOR) + "." +
           std::to_string(ROS_VERSION_PATCH);
  }
  std::string versions() const override { return JsonObject().str("roscpp", version().substr(7)).done(); }
  std::string effective_config() const override { return config_json_; }
  std::unique_ptr<DiscoveryParticipant> make_participant() const override { return make_ros1_participant(); }

  Errc open(const AdapterConfig& cfg) override {
    role_ = cfg.role;
    subscribers_ = cfg.subscribers;
    transport_ = cfg.transport.empty() ? "tcpros" : cfg.transport;
    reliability_ = "reliable";
    receive_ = cfg.receive.empty() ? "waitset" : cfg.receive;
    const char* master = std::getenv("ROS_MASTER_URI");
    if (master == nullptr || !*master)
      return fail(Errc::unsupported, "ros1: ROS_MASTER_URI is not set (mwperf starts a rosmaster for ros1 points)");
    const std::string ip = cfg.nic.empty() || cfg.nic == "lo" ? "127.0.0.1" : interface_ipv4(cfg.nic);
    if (ip.empty()) return fail(Errc::unsupported, "ros1: --nic " + cfg.nic + ": no IPv4 address on that interface");
    const Errc up = init_node(master, ip, cfg);
    if (up != Errc::ok) return up;
    rx_.resize(std::max<size_t>(cfg.size, 64));

    const uint32_t queue = cfg.keep_all ? 0 : uint32_t(cfg.history_depth);
    const bool latch = cfg.durability == "transient-local";
    const std::string id = std::to_string(cfg.run_id);
    const std::string out = std::string("/mwperf_") + (role_ == Role::pub ? "data_" : "echo_") + id;
    const std::string in = std::string("/mwperf_") + (role_ == Role::pub ? "echo_" : "data_") + id;
    pub_ = nh_->advertise<RosBytes>(out, queue, latch);
    ros::SubscribeOptions ops;
    ops.template init<RosBytes>(
        in, queue, [this](const boost::shared_ptr<const RosBytes>& m) { on_message(*m); },
        [this] {
          auto m = boost::make_shared<RosBytes>();
          m->sink = rx_.data();
          m->cap = rx_.size();
          return m;
        });
    ops.transport_hints = transport_ == "tcpros-nodelay" ? ros::TransportHints().tcpNoDelay() : ros::TransportHints();
    ops.callback_queue = receive_ == "listener" ? static_cast<ros::CallbackQueueInterface*>(&inline_) : &queue_;
    sub_ = nh_->subscribe(ops);
    if (!pub_ || !sub_) return fail(Errc::io, "ros1: cannot advertise or subscribe");

    JsonObject j;
    j.str("master", master).str("ros_ip", ip).str("transport", transport_).str("reliability", reliability_);
    j.str("history", cfg.keep_all ? "keep-all" : "keep-last:" + std::to_string(queue)).num("queue_size", queue);
    j.str("durability", latch ? "transient-local" : "volatile").boolean("latch", latch);
    j.boolean("tcp_nodelay", transport_ == "tcpros-nodelay").str("receive", receive_);
    j.str("message_type", "std_msgs/UInt8MultiArray").str("topic_out", out).str("topic_in", in);
    config_json_ = j.done();
    return Errc::ok;
  }

  Errc wait_matched(int64_t timeout_ns) override {
    const auto end = std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout_ns);
    while (pub_.getNumSubscribers() < subscribers_ || sub_.getNumPublishers() == 0) {
      if (std::chrono::steady_clock::now() >= end)
        return fail(Errc::timeout, "ros1: no matching peer within " + std::to_string(timeout_ns / 1000000000) +
                                       " s (publisher and echo subscription)");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    matched_ = true;
    return Errc::ok;
  }

  Errc send(const uint8_t* data, size_t len) override {
    RosBytes m;
    m.data = data;
    m.len = uint32_t(len);
    pub_.publish(m);
    return Errc::ok;
  }

  // The subscription's callback runs inside callOne on this thread; it leaves
  // the message in rx_.
  Errc recv(const uint8_t** data, size_t* len, int64_t timeout_ns) override {
    got_ = false;
    too_big_ = false;
    queue_.callOne(ros::WallDuration(timeout_ns < 0 ? 3600.0 : double(timeout_ns) / 1e9));
    if (too_big_) return fail(Errc::too_big, "ros1: message larger than the test point's size");
    if (!got_) return Errc::timeout;  // nothing, or woken
    *data = rx_.data();
    *len = got_len_;
    return Errc::ok;
  }

  Errc listen(Receiver* r) override {
    {
      std::lock_guard<std::mutex> lk(listen_mu_);
      receiver_.store(r, std::memory_order_release);
    }
    listen_cv_.notify_all();
    return Errc::ok;
  }

  bool can_wake() const override { return receive_ == "waitset"; }
  void wake() override { queue_.addCallback(boost::make_shared<Nothing>()); }

  void close() override {
    if (nh_ == nullptr) return;
    if (role_ == Role::pub && matched_) linger();
    sub_.shutdown();
    pub_.shutdown();
    nh_.reset();
    std::lock_guard<std::mutex> lk(g_init_mu);
    if (--g_users == 0) ros::shutdown();
  }

 private:
  struct Nothing final : ros::CallbackInterface {
    CallResult call() override { return Success; }
  };

  Errc init_node(const char* master, const std::string& ip, const AdapterConfig& cfg) {
    std::lock_guard<std::mutex> lk(g_init_mu);
    if (g_users == 0) {
      // roscpp's TCPROS listener binds to ROS_IP when it is set, else to every interface.
      setenv("ROS_IP", ip.c_str(), 1);
      unsetenv("ROS_HOSTNAME");
      // rosconsole writes INFO to stdout, the agent's control channel.
      if (ros::console::set_logger_level(ROSCONSOLE_DEFAULT_NAME, ros::console::levels::Warn))
        ros::console::notifyLoggerLevelsChanged();
      ros::M_string remap{{"__master", master}, {"__ip", ip}};
      const std::string name =
          std::string("mwperf_") + (cfg.role == Role::pub ? "pub_" : "sub_") + std::to_string(cfg.run_id);
      ros::init(remap, name, ros::init_options::NoSigintHandler | ros::init_options::NoRosout);
      ros::master::setRetryTimeout(ros::WallDuration(5));
      if (!ros::master::check()) return fail(Errc::io, std::string("ros1: no rosmaster at ") + master);
      ros::start();
    }
    ++g_users;
    nh_ = std::make_unique<ros::NodeHandle>();
    return Errc::ok;
  }

  void on_message(const RosBytes& m) {
    if (m.len == 0) {  // the closing publisher's marker
      if (role_ == Role::sub)
        pub_.publish(RosBytes{});
      else
        end_echoed_ = true;
      return;
    }
    if (m.too_big) {
      too_big_ = true;
      return;
    }
    if (receive_ == "listener") {
      Receiver* r = receiver_.load(std::memory_order_acquire);
      if (r == nullptr) {  // a message that comes before the core listens waits for it (at the start only)
        std::unique_lock<std::mutex> lk(listen_mu_);
        listen_cv_.wait_for(lk, std::chrono::seconds(2), [this] { return receiver_.load() != nullptr; });
        r = receiver_.load();
      }
      if (r != nullptr) r->on_message(rx_.data(), m.len);
      return;
    }
    got_ = true;
    got_len_ = m.len;
  }

  // Everything published has reached the subscriber once the empty marker
  // published after it comes back (or the linger times out).
  void linger() {
    end_echoed_ = false;
    pub_.publish(RosBytes{});
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(kLingerMs);
    // (Nothing will echo once the peer's echo publisher is gone.)
    while (!end_echoed_ && sub_.getNumPublishers() > 0 && std::chrono::steady_clock::now() < end) {
      if (receive_ == "listener")
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      else
        queue_.callOne(ros::WallDuration(0.01));
    }
  }

  Role role_ = Role::pub;
  uint32_t subscribers_ = 1;
  ros::CallbackQueue queue_;  // the queues before the subscriber, which they must outlive
  InlineQueue inline_;
  std::unique_ptr<ros::NodeHandle> nh_;
  ros::Publisher pub_;
  ros::Subscriber sub_;
  std::vector<uint8_t> rx_;
  std::mutex listen_mu_;
  std::condition_variable listen_cv_;
  std::atomic<Receiver*> receiver_{nullptr};
  bool got_ = false, too_big_ = false, matched_ = false;
  std::atomic<bool> end_echoed_{false};
  size_t got_len_ = 0;
  std::string config_json_;
};

}  // namespace

std::unique_ptr<Adapter> make_ros1_adapter() { return std::make_unique<Ros1Adapter>(); }

}  // namespace mwperf
