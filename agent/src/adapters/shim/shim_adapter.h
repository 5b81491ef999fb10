// The part the zenoh and iceoryx2 adapters share: both go through
// the Rust shim (here), one Rust static library with a C ABI (the zenoh and
// iceoryx2 crates have no C bindings on crates.io). The shim only moves
// bytes; this class maps its calls onto the Adapter interface, and each
// adapter fills in its description and the shim's configuration.
//
// What the shim delivers is the middleware's (a slice of zenoh's receive
// batch, iceoryx2's read-only shared memory), and its handle serves one
// thread at a time but for wake(): the descriptions say so (writable_data and
// concurrent_recv false).
#pragma once
#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "core/adapter.h"
#include "mwperf_shim.h"
#include "util/json.h"

namespace mwperf {

class ShimAdapter : public Adapter {
 public:
  ~ShimAdapter() override { close(); }
  std::string effective_config() const override { return config_json_; }

  Errc wait_matched(int64_t timeout_ns) override { return result(mws_wait_matched(handle_, timeout_ns), "match"); }
  Errc send(const uint8_t* data, size_t len) override { return result(mws_send(handle_, data, len), "send"); }
  // Both middlewares lend what a message goes out in (mwperf_shim.h: mws_loan).
  bool can_loan() const override { return true; }
  Errc loan(const uint8_t* from, size_t len, uint8_t** out) override {
    return result(mws_loan(handle_, from, len, out), "loan");
  }
  Errc publish_loaned(uint8_t* buf, size_t len) override { return result(mws_send_loaned(handle_, buf, len), "send"); }
  Errc recv(const uint8_t** data, size_t* len, int64_t timeout_ns) override {
    const int32_t rc = mws_recv(handle_, data, len, timeout_ns);
    return rc == MWS_TIMEOUT ? Errc::timeout : result(rc, "receive");
  }
  Errc listen(Receiver* r) override {
    receiver_.store(r, std::memory_order_release);  // the shim's callback delivers from then on
    return Errc::ok;
  }
  // Read live from the shim's counters (the effective configuration is taken at open).
  std::string data_path() const override { return handle_ != nullptr ? mws_data_path(handle_) : "null"; }
  // "zenoh 1.10.2" -> {"zenoh":"1.10.2"}
  std::string versions() const override {
    const std::string v = version();
    const size_t space = v.find(' ');
    if (space == std::string::npos) return "{}";
    const std::string name = v.substr(0, space);
    return JsonObject().str(name.c_str(), v.substr(space + 1)).done();
  }
  bool can_wake() const override { return handle_ != nullptr; }
  void wake() override {
    if (handle_ != nullptr) mws_wake(handle_);
  }
  void close() override {
    mws_close(handle_);
    handle_ = nullptr;
  }

 protected:
  // Opens the shim with `c` (struct_size and the push callback filled in here);
  // `extra` goes into the effective configuration next to the shim's own.
  Errc open_shim(const char* mw, mws_config c, JsonObject extra) {
    c.struct_size = sizeof c;
    if (receive_ == "listener") {
      c.on_message = &ShimAdapter::deliver;
      c.on_message_ctx = this;
    }
    const int32_t rc = mws_open(&c, &handle_);
    if (rc != MWS_OK) return fail(to_errc(rc), std::string(mw) + ": " + mws_last_error());
    name_ = mw;
    config_json_ = extra.raw("shim", mws_info(handle_)).done();
    return Errc::ok;
  }

 private:
  // On the middleware's thread (zenoh's receive task, iceoryx2's shim thread).
  // A sample that comes before the core listens (the very first) waits for it.
  static void deliver(void* self, const uint8_t* data, size_t len) {
    const auto* a = static_cast<const ShimAdapter*>(self);
    Receiver* r = a->receiver_.load(std::memory_order_acquire);
    for (int waited = 0; r == nullptr && waited < 2000; ++waited) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      r = a->receiver_.load(std::memory_order_acquire);
    }
    if (r != nullptr) r->on_message(data, len);
  }

  static Errc to_errc(int32_t rc) {
    switch (rc) {
      case MWS_OK:
        return Errc::ok;
      case MWS_TIMEOUT:
        return Errc::timeout;
      case MWS_CLOSED:
        return Errc::closed;
      case MWS_TOO_BIG:
        return Errc::too_big;
      case MWS_UNSUPPORTED:
        return Errc::unsupported;
      default:
        return Errc::io;
    }
  }

  Errc result(int32_t rc, const char* what) {
    if (rc == MWS_OK) return Errc::ok;
    return fail(to_errc(rc), name_ + ": " + what + ": " + mws_last_error());
  }

  mws_handle* handle_ = nullptr;
  std::atomic<Receiver*> receiver_{nullptr};
  std::string name_, config_json_;
};

}  // namespace mwperf
