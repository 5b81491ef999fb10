// What the adapter tests share: a publisher and a subscriber of one adapter,
// opened and matched on a topic of their own; messages of a known pattern,
// received one at a time or collected from a listener.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "plugins/registry.h"

namespace mwperf {

struct Pair {
  std::unique_ptr<Adapter> pub, sub;
};

inline uint32_t next_run_id() {
  // A fresh topic per pair: nothing left from a previous test, and nothing
  // shared with a test running at the same time in another process (ctest -j);
  // inline: one counter for every test file of the binary.
  static uint32_t id = uint32_t(getpid()) << 10;
  return ++id;
}

inline Pair open_pair(const std::string& mw, size_t size, AdapterConfig c = {}) {
  Pair p{make_adapter(mw), make_adapter(mw)};
  c.size = size;
  c.run_id = next_run_id();
  c.role = Role::sub;
  EXPECT_EQ(p.sub->open(c), Errc::ok) << p.sub->last_error();
  c.role = Role::pub;
  c.port = p.sub->bound_port();
  EXPECT_EQ(p.pub->open(c), Errc::ok) << p.pub->last_error();
  std::thread m([&] { EXPECT_EQ(p.sub->wait_matched(10'000'000'000), Errc::ok) << p.sub->last_error(); });
  EXPECT_EQ(p.pub->wait_matched(10'000'000'000), Errc::ok) << p.pub->last_error();
  m.join();
  return p;
}

inline std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint8_t(i * 31 + seed);
  return v;
}

// Receives one message within 5 s (polling adapters are asked repeatedly).
inline Errc recv_one(Adapter& a, std::vector<uint8_t>* out) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (;;) {
    const uint8_t* d = nullptr;
    size_t n = 0;
    const Errc e = a.recv(&d, &n, 100'000'000);
    if (e == Errc::ok) {
      out->assign(d, d + n);
      return e;
    }
    if (e != Errc::timeout || std::chrono::steady_clock::now() > end) return e;
  }
}

struct Collector final : Receiver {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::vector<uint8_t>> got;
  void on_message(const uint8_t* data, size_t len) override {
    std::lock_guard<std::mutex> lk(mu);
    got.emplace_back(data, data + len);
    cv.notify_all();
  }
  bool wait_for(size_t n) {
    std::unique_lock<std::mutex> lk(mu);
    return cv.wait_for(lk, std::chrono::seconds(10), [&] { return got.size() >= n; });
  }
};

}  // namespace mwperf
