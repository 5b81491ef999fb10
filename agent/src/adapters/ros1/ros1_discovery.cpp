// ROS 1's participant of a discovery point (core/discovery.h), built into the
// ros1 adapter (roscpp 1.15, Debian). ROS 1's discovery is the rosmaster's:
// every node registers its publishers and subscribers with the master the
// controller starts (ROS_MASTER_URI), which tells each subscriber the
// publishers of its topic; the subscriber then asks each of them for a TCPROS
// connection. One profile, `unicast`: the master and every node on 127.0.0.1
// (ROS_IP), nothing multicast. A namespace pair's link is refused (the
// master would have to live in one of the namespaces), and so are threads
// (roscpp is one node per process).
//
// Each participant is the node mwperf_disc_<run>_<index>; topic t is
// /<discovery_topic(run, t)>, std_msgs/UInt8MultiArray, a latched publisher
// (its one sample goes to every subscriber that connects later:
// transient-local) and a subscriber with a queue of N. matched() is the sum of
// Subscriber::getNumPublishers(): the publishers each subscriber has a link
// to, its own node's included (roscpp links a node's subscriber to its own
// publisher in process).
#include <ros/callback_queue.h>
#include <ros/console.h>
#include <ros/ros.h>
#include <std_msgs/UInt8MultiArray.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "adapters/ros1/ros1_discovery.h"
#include "util/json.h"

namespace mwperf {
namespace {

class Ros1Participant final : public DiscoveryParticipant {
 public:
  ~Ros1Participant() override { close(); }

  Errc open(const DiscoveryOptions& o) override {
    if (o.profile != "unicast")
      return fail(Errc::unsupported, "ros1: --discovery " + o.profile +
                                         ": ROS 1 has one discovery, the rosmaster's, here on 127.0.0.1 "
                                         "(--discovery unicast)");
    if (o.nic != "lo")
      return fail(Errc::unsupported,
                  "ros1: --link netns: the participants meet through one rosmaster, which the controller runs on "
                  "this host's loopback, not in a namespace of the pair");
    if (o.hosted > 1)
      return fail(Errc::unsupported,
                  "ros1: --participants-as threads: roscpp is one node per process (ros::init once), so "
                  "participants of one process would be one: run them as processes");
    const char* master = std::getenv("ROS_MASTER_URI");
    if (master == nullptr || !*master)
      return fail(Errc::unsupported, "ros1: ROS_MASTER_URI is not set (mwperf starts a rosmaster for ros1 points)");
    master_ = master;
    setenv("ROS_IP", "127.0.0.1", 1);  // roscpp's TCPROS and XML-RPC servers on loopback only
    unsetenv("ROS_HOSTNAME");
    // rosconsole writes INFO to stdout, the agent's control channel.
    if (ros::console::set_logger_level(ROSCONSOLE_DEFAULT_NAME, ros::console::levels::Warn))
      ros::console::notifyLoggerLevelsChanged();
    node_ = "mwperf_disc_" + std::to_string(o.run_id) + "_" + std::to_string(o.index);
    ros::M_string remap{{"__master", master_}, {"__ip", "127.0.0.1"}};
    ros::init(remap, node_, ros::init_options::NoSigintHandler | ros::init_options::NoRosout);
    ros::master::setRetryTimeout(ros::WallDuration(5));
    if (!ros::master::check()) return fail(Errc::io, "ros1: no rosmaster at " + master_);
    ros::start();
    started_ = true;
    nh_.emplace();
    nh_->setCallbackQueue(&queue_);
    queue_size_ = o.participants;
    std_msgs::UInt8MultiArray sample;
    sample.data.resize(4);
    std::memcpy(sample.data.data(), &o.index, 4);
    for (uint32_t t = 0; t < o.topics; ++t) {
      const std::string name = "/" + discovery_topic(o.run_id, t);
      pubs_.push_back(nh_->advertise<std_msgs::UInt8MultiArray>(name, 1, /*latch=*/true));
      const boost::function<void(const std_msgs::UInt8MultiArray::ConstPtr&)> got =
          [this, t](const std_msgs::UInt8MultiArray::ConstPtr& m) { on_sample(t, *m); };
      subs_.push_back(nh_->subscribe<std_msgs::UInt8MultiArray>(name, queue_size_, got));
      if (!pubs_.back() || !subs_.back()) return fail(Errc::io, "ros1: cannot advertise or subscribe " + name);
      pubs_.back().publish(sample);
    }
    return Errc::ok;
  }

  uint64_t matched() override {
    uint64_t n = 0;
    for (const ros::Subscriber& s : subs_) n += s.getNumPublishers();
    return n;
  }

  // The subscribers' callbacks run here, on the core's thread (their own queue).
  void take(void (*seen)(void*, uint32_t, uint32_t), void* ctx) override {
    seen_ = seen;
    ctx_ = ctx;
    queue_.callAvailable(ros::WallDuration(0));
    seen_ = nullptr;
  }

  std::string config_json() const override {
    return JsonObject()
        .str("discovery", "rosmaster (the controller's, on 127.0.0.1): XML-RPC registration, TCPROS links")
        .str("master", master_)
        .str("ros_ip", "127.0.0.1")
        .str("node", node_)
        .str("qos", "latched publishers (transient-local), subscriber queue " + std::to_string(queue_size_))
        .str("matched", "the sum of Subscriber::getNumPublishers(), the node's own publisher included")
        .done();
  }
  std::string version() const override {
    return "roscpp " + std::to_string(ROS_VERSION_MAJOR) + "." + std::to_string(ROS_VERSION_MINOR) + "." +
           std::to_string(ROS_VERSION_PATCH);
  }
  void close() override {
    for (auto& s : subs_) s.shutdown();
    for (auto& p : pubs_) p.shutdown();
    subs_.clear();
    pubs_.clear();
    nh_.reset();
    if (started_) ros::shutdown();
    started_ = false;
  }

 private:
  void on_sample(uint32_t t, const std_msgs::UInt8MultiArray& m) {
    uint32_t from = UINT32_MAX;
    if (m.data.size() == 4) std::memcpy(&from, m.data.data(), 4);
    if (seen_ != nullptr) seen_(ctx_, t, from);
  }

  std::string master_, node_;
  uint32_t queue_size_ = 0;
  bool started_ = false;
  ros::CallbackQueue queue_;  // before the subscribers, which it must outlive
  std::optional<ros::NodeHandle> nh_;
  std::vector<ros::Publisher> pubs_;
  std::vector<ros::Subscriber> subs_;
  void (*seen_)(void*, uint32_t, uint32_t) = nullptr;
  void* ctx_ = nullptr;
};

}  // namespace

std::unique_ptr<DiscoveryParticipant> make_ros1_participant() { return std::make_unique<Ros1Participant>(); }

}  // namespace mwperf
