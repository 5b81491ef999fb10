// An agent pair (--reuse): one adapter serves consecutive points, each its
// own Session. PairAdapter stands for the adapter towards the sessions: it
// forwards every call, and makes listen() something a session may do once
// per point: the middleware's thread is given one relay for the pair's
// life, and each point's listen() only points the relay at that point's
// receiver (a middleware's listener pointer is set once, never swapped
// under its thread). detach() is called between two points, before the last
// point's session goes: once it returns, no delivery is inside that
// session's receiver, and none reaches it again.
#pragma once
#include <memory>
#include <mutex>

#include "core/adapter.h"

namespace mwperf {

class PairAdapter final : public Adapter {
 public:
  explicit PairAdapter(std::unique_ptr<Adapter> inner) : inner_(std::move(inner)) {}

  const Description& description() const override { return inner_->description(); }
  std::string version() const override { return inner_->version(); }
  std::string effective_config() const override { return inner_->effective_config(); }
  Errc open(const AdapterConfig& cfg) override { return sync(inner_->open(cfg)); }
  uint16_t bound_port() const override { return inner_->bound_port(); }
  Errc wait_matched(int64_t timeout_ns) override { return sync(inner_->wait_matched(timeout_ns)); }
  Errc send(const uint8_t* data, size_t len) override {
    const Errc e = inner_->send(data, len);
    return e == Errc::ok ? e : sync(e);
  }
  Errc recv(const uint8_t** data, size_t* len, int64_t timeout_ns) override {
    const Errc e = inner_->recv(data, len, timeout_ns);
    return e == Errc::ok || e == Errc::timeout ? e : sync(e);
  }
  Errc listen(Receiver* r) override;
  void close() override { inner_->close(); }
  void flush() override { inner_->flush(); }
  bool can_wake() const override { return inner_->can_wake(); }
  void wake() override { inner_->wake(); }
  int64_t rejected() const override { return inner_->rejected(); }
  std::string data_path() const override { return inner_->data_path(); }
  std::string versions() const override { return inner_->versions(); }

  // Between two points: no delivery reaches the last point's receiver any more.
  void detach();

 private:
  class Relay final : public Receiver {
   public:
    void on_message(const uint8_t* data, size_t len) override {
      std::lock_guard<std::mutex> lk(mu);  // uncontended but between points
      if (to != nullptr) to->on_message(data, len);
    }
    std::mutex mu;
    Receiver* to = nullptr;
  };

  // What the inner adapter says is in force (and its last error), as this one's.
  Errc sync(Errc e) {
    error_ = inner_->last_error();
    transport_ = inner_->transport_in_use();
    reliability_ = inner_->reliability_in_use();
    receive_ = inner_->receive_in_use();
    return e;
  }

  std::unique_ptr<Adapter> inner_;
  Relay relay_;
  bool listening_ = false;  // the inner adapter delivers to relay_
};

}  // namespace mwperf
