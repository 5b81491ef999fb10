// The sessions' test harness: an in-process channel whose sends can be made
// slow or lossy (a test double for the transport, never a middleware) and
// that counts what it carried (the ground truth), two threads, one clock.
#pragma once
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <regex>
#include <thread>
#include <vector>

#include "core/description.h"
#include "core/header.h"
#include "core/session.h"
#include "util/clock.h"

namespace mwperf::harness {

// One direction of a test double's link: what was sent, in order.
template <class T>
struct BasicQueue {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<T> q;
  bool woken = false;
  void push(T item) {
    {
      std::lock_guard<std::mutex> lk(mu);
      q.push_back(std::move(item));
    }
    cv.notify_one();
  }
  // The next item within timeout_ns (< 0: until one comes); false when none came or wake() was called.
  bool pop(T* out, int64_t timeout_ns) {
    std::unique_lock<std::mutex> lk(mu);
    auto ready = [&] { return !q.empty() || woken; };
    if (timeout_ns < 0)
      cv.wait(lk, ready);
    else
      cv.wait_for(lk, std::chrono::nanoseconds(timeout_ns), ready);
    if (q.empty()) {
      woken = false;
      return false;
    }
    *out = std::move(q.front());
    q.pop_front();
    return true;
  }
  void wake() {
    {
      std::lock_guard<std::mutex> lk(mu);
      woken = true;
    }
    cv.notify_all();
  }
};
using Queue = BasicQueue<std::vector<uint8_t>>;

// Both directions between one pub and one sub.
struct Channel {
  Queue to_sub, to_pub;
  int64_t send_delay_ns = 0;   // every data send takes this long (a slow middleware)
  int64_t echo_delay_ns = 0;   // every echo takes this long before it goes
  uint64_t drop_every = 0;     // drop every Nth data message (exact loss)
  uint64_t timeout_every = 0;  // every Nth data send times out (the middleware's blocking time ran out: not sent)
  bool in_order = false;       // the adapters say Description::in_order
  // What the channel saw: the ground truth the sessions' counts are checked against.
  std::atomic<uint64_t> data_sent{0};   // data messages the publisher handed over
  std::atomic<uint64_t> timeouts{0};    // data sends that timed out (not among data_sent)
  std::atomic<uint64_t> send_calls{0};  // data sends tried (timeout_every counts these)
  std::atomic<uint64_t> dropped{0};     // of them, dropped on the way
  std::atomic<uint64_t> echoes{0};      // messages the subscriber sent back
  std::atomic<uint64_t> warm_sent{0}, warm_dropped{0}, warm_echoes{0};  // of each, warm-up ones (header flag)
};

class LoopAdapter final : public Adapter {
 public:
  LoopAdapter(Channel& c, Role role, bool listener) : c_(c), role_(role), listener_(listener) {}
  ~LoopAdapter() override { close(); }
  const Description& description() const override {
    static const Description d = describe(false), ordered = describe(true);
    return c_.in_order ? ordered : d;
  }
  static Description describe(bool in_order) {
    Description x;
    x.max_size = 1 << 20;
    x.transports = x.transport = "loop";
    x.reliabilities = x.reliability = "best-effort";
    x.receives = "listener,waitset";
    x.receive = "waitset";
    x.in_order = in_order;
    return x;
  }
  std::string version() const override { return "test"; }
  std::string effective_config() const override { return "{}"; }
  Errc open(const AdapterConfig&) override {
    receive_ = listener_ ? "listener" : "waitset";
    transport_ = "loop";
    reliability_ = "best-effort";
    return Errc::ok;
  }
  Errc wait_matched(int64_t) override { return Errc::ok; }
  Errc send(const uint8_t* data, size_t len) override {
    Queue& out = role_ == Role::pub ? c_.to_sub : c_.to_pub;
    const bool warm = len > 5 && (data[5] & kFlagWarmup);  // Header::flags
    if (role_ == Role::pub) {
      if (c_.send_delay_ns > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(c_.send_delay_ns));
      if (c_.timeout_every && ++c_.send_calls % c_.timeout_every == 0) {
        ++c_.timeouts;
        return Errc::timeout;
      }
      c_.warm_sent += warm;
      if (++c_.data_sent % (c_.drop_every ? c_.drop_every : UINT64_MAX) == 0) {
        ++c_.dropped;
        c_.warm_dropped += warm;
        return Errc::ok;  // lost on the way
      }
    } else {
      if (c_.echo_delay_ns > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(c_.echo_delay_ns));
      ++c_.echoes;
      c_.warm_echoes += warm;
    }
    out.push(std::vector<uint8_t>(data, data + len));
    return Errc::ok;
  }
  Errc recv(const uint8_t** data, size_t* len, int64_t timeout_ns) override {
    Queue& in = role_ == Role::pub ? c_.to_pub : c_.to_sub;
    if (!in.pop(&buf_, timeout_ns)) return Errc::timeout;
    *data = buf_.data();
    *len = buf_.size();
    return Errc::ok;
  }
  Errc listen(Receiver* r) override {
    thread_ = std::thread([this, r] {
      const uint8_t* d;
      size_t n;
      while (!quit_) {
        if (recv(&d, &n, 5'000'000) == Errc::ok) r->on_message(d, n);
      }
    });
    return Errc::ok;
  }
  bool can_wake() const override { return true; }
  void wake() override { (role_ == Role::pub ? c_.to_pub : c_.to_sub).wake(); }
  void close() override {
    quit_ = true;
    if (thread_.joinable()) thread_.join();
  }

 private:
  Channel& c_;
  Role role_;
  bool listener_;
  std::vector<uint8_t> buf_;
  std::thread thread_;
  std::atomic<bool> quit_{false};
};

inline double field(const std::string& json, const std::string& key) {
  std::smatch m;
  const std::regex re("\"" + key + "\":(-?[0-9.eE+]+)");
  if (!std::regex_search(json, m, re)) return -1;
  return std::stod(m[1]);
}

inline std::string object(const std::string& json, const std::string& key) {
  const size_t at = json.find("\"" + key + "\":{");
  if (at == std::string::npos) return "";
  return json.substr(at, json.find('}', at) - at + 1);
}

// The object at key, with the objects nested in it.
inline std::string object_at(const std::string& json, const std::string& key) {
  size_t at = json.find("\"" + key + "\":{");
  if (at == std::string::npos) return "";
  at = json.find('{', at);
  int depth = 0;
  for (size_t i = at; i < json.size(); ++i) {
    depth += json[i] == '{' ? 1 : json[i] == '}' ? -1 : 0;
    if (depth == 0) return json.substr(at, i - at + 1);
  }
  return "";
}

struct Point {
  std::string pub, sub;
  int64_t wall_ns = 0;
};

inline Options options(Mode mode, Role role) {
  Options o;
  o.command = "run";
  o.mw = "loop";
  o.role = role;
  o.mode = mode;
  o.size = 64;
  o.warmup_ns = 0;
  o.duration_ns = 300'000'000;
  o.ping_timeout_ns = 200'000'000;
  o.drain_ns = 100'000'000;
  return o;
}

// Runs one point over a pair of adapters (publisher's, subscriber's): sub and
// pub sessions on two threads, the stop as the controller sends it.
inline Point run_pair(Options po, Adapter& pa, Adapter& sa) {
  Options so = po;
  so.role = Role::sub;
  AdapterConfig cfg;
  pa.open(cfg);
  sa.open(cfg);
  StopSignal pstop, sstop;
  auto pub = make_publisher(po, pa, pstop);
  auto sub = make_subscriber(so, sa, sstop);
  Point p;
  std::thread st([&] { p.sub = sub->run(0, Footprint{}).line; });
  const int64_t t0 = now_ns();
  p.pub = pub->run(0, Footprint{}).line;
  p.wall_ns = now_ns() - t0;
  sstop.request(int64_t(field(p.pub, "sent")));
  st.join();
  pa.close();
  sa.close();
  return p;
}

// One point over the channel.
inline Point run_point(Options po, Channel& ch, bool listener = false) {
  LoopAdapter pa(ch, Role::pub, listener), sa(ch, Role::sub, listener);
  return run_pair(po, pa, sa);
}

}  // namespace mwperf::harness
