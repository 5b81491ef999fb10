// The agents' side of the control channel, and the gate through which a
// middleware's own thread enters the core.
//
// read_run_key: the run's key, handed over on stdin before anything else.
// StopSignal: a thread reads `go`, `stop [SENT]` and `close` lines from stdin
// (EOF may count as `stop -1`, and always as `close`) and raises a flag the
// measuring code polls with one relaxed load. `go` is the start barrier: the publisher sends its first
// sample only once every subscriber is matched and receiving.
// Gate: the Receiver handed to Adapter::listen(); it calls the core's handler
// while open, one delivery at a time, and shut() returns only once no
// delivery is inside the handler any more.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>

#include "core/adapter.h"
#include "core/header.h"

namespace mwperf {

// `--key stdin`: the run's key, the first line the controller writes
// (`key <32 hex digits>`), read before anything else is. "" when read, else
// why not (the caller fails with it).
std::string read_run_key(RunKey* key);

class StopSignal {
 public:
  // Detached thread. eof_is_stop: EOF at stdin counts as `stop -1` (the
  // subscriber drains and reports when the controller goes away).
  // pair (--reuse): the thread reads on after a `stop` and takes `next ARGS`
  // lines (see wait_next).
  void start_stdin_reader(bool eof_is_stop, bool pair = false);
  bool requested() const { return stop_.load(std::memory_order_relaxed); }
  int64_t sent() const { return sent_.load(std::memory_order_acquire); }
  void request(int64_t sent);
  // `stop S0,S1,...`: each publisher's count (N:M); sent() is their sum.
  void request(const int64_t* each, size_t n);
  // Publisher p's count of `publishers`: -1 when unknown (one total for several).
  int64_t sent_of(size_t p, size_t publishers) const;
  static constexpr size_t kMaxSentCounts = 64;
  // Blocks until requested or timeout_ns passed; true when requested.
  bool wait(int64_t timeout_ns);
  // Blocks until `go` (or a stop, or EOF: nothing to wait for) or timeout_ns
  // passed; true unless the time ran out.
  bool wait_go(int64_t timeout_ns);
  // Blocks until the controller closes the channel (`close`, or EOF at stdin)
  // or timeout_ns passed; true when closed. The publisher keeps its endpoints
  // until then (kSettleNs at most): the controller closes it once every
  // subscriber has its result.
  bool wait_closed(int64_t timeout_ns);
  // An agent pair between two points: blocks until `next ARGS` (true, *args
  // its arguments; the signal is reset for the next point: no go, no stop)
  // or until the channel is closed (`close`, EOF: false). Only once every
  // side of the last point has returned (the controller sends `next` after
  // every result).
  bool wait_next(std::string* args);
  // A receive loop that blocks without a timeout registers its adapter: the
  // stop wakes every one registered (one per reader, --subscribers-as threads). Remove it
  // before the adapter may go. false: all kMaxWakeTargets slots are taken
  // (the caller must then wait with a timeout).
  bool add_wake_target(Adapter* a);
  void remove_wake_target(Adapter* a);
  // Registered now (for tests).
  size_t wake_targets() const;

  static constexpr size_t kMaxWakeTargets = 64;

 private:
  void keep_waking();
  void start() { raise(&go_); }       // `go`
  void close() { raise(&closed_); }   // `close` or EOF
  void raise(bool* flag);             // sets one of the flags below under mu_, wakes the waits
  void offer_next(const char* args);  // `next ARGS`
  void wake_all_locked();

  mutable std::mutex mu_;
  std::condition_variable cv_;
  Adapter* wake_targets_[kMaxWakeTargets] = {};  // a fixed array: nothing allocated on registering
  size_t n_wake_ = 0;
  std::atomic<bool> stop_{false};
  bool go_ = false;        // under mu_
  bool closed_ = false;    // under mu_
  bool has_next_ = false;  // under mu_: a `next` line waits in next_
  std::string next_;       // under mu_
  std::atomic<int64_t> sent_{-1};
  std::atomic<int64_t> each_[kMaxSentCounts] = {};
  std::atomic<size_t> n_each_{0};
};

template <class Handler>
class Gate final : public Receiver {
 public:
  explicit Gate(Handler& h) : h_(h) {}
  void on_message(const uint8_t* data, size_t len) override {
    std::lock_guard<std::mutex> lk(mu_);  // uncontended: two atomic operations
    if (open_) h_.on_message(data, len);
  }
  void shut() {
    std::lock_guard<std::mutex> lk(mu_);
    open_ = false;
  }

 private:
  Handler& h_;
  std::mutex mu_;
  bool open_ = true;
};

}  // namespace mwperf
