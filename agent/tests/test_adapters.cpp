// The raw socket adapters on loopback: bytes in, the same bytes out.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "adapters/adapter.h"

using namespace mwperf;

namespace {

struct Pair {
  std::unique_ptr<Adapter> pub, sub;
};

Pair open_pair(const char* mw, size_t size, AdapterConfig c = {}) {
  Pair p{make_adapter(mw), make_adapter(mw)};
  c.size = size;
  c.run_id = 4242;
  c.role = Role::sub;
  EXPECT_EQ(p.sub->open(c), Errc::ok) << p.sub->last_error();
  c.role = Role::pub;
  c.port = p.sub->bound_port();
  EXPECT_EQ(p.pub->open(c), Errc::ok) << p.pub->last_error();
  EXPECT_EQ(p.sub->wait_matched(10'000'000'000), Errc::ok) << p.sub->last_error();
  EXPECT_EQ(p.pub->wait_matched(10'000'000'000), Errc::ok) << p.pub->last_error();
  return p;
}

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint8_t(i * 31 + seed);
  return v;
}

void round_trip(const char* mw, size_t size, AdapterConfig cfg = {}) {
  Pair p = open_pair(mw, size, cfg);
  auto out = pattern(size, 7);
  std::vector<uint8_t> in(size);
  size_t len = 0;
  ASSERT_EQ(p.pub->send(out.data(), out.size()), Errc::ok);
  ASSERT_EQ(p.sub->recv(in.data(), in.size(), 2'000'000'000, &len), Errc::ok) << p.sub->last_error();
  ASSERT_EQ(len, size);
  EXPECT_EQ(in, out);
  // and back (the echo direction)
  ASSERT_EQ(p.sub->send(in.data(), len), Errc::ok);
  std::vector<uint8_t> back(size);
  ASSERT_EQ(p.pub->recv(back.data(), back.size(), 2'000'000'000, &len), Errc::ok);
  EXPECT_EQ(back, out);
}

}  // namespace

TEST(Udp, RoundTrip) {
  round_trip("udp", 32);
  round_trip("udp", 65507);
}

TEST(Udp, RefusesOversize) {
  auto a = make_adapter("udp");
  AdapterConfig c;
  c.size = 65508;
  EXPECT_EQ(a->open(c), Errc::unsupported);
  EXPECT_NE(a->last_error().find("65507"), std::string::npos);
}

TEST(Udp, TimeoutAndPoll) {
  Pair p = open_pair("udp", 64);
  std::vector<uint8_t> in(64);
  size_t len = 0;
  EXPECT_EQ(p.sub->recv(in.data(), in.size(), 0, &len), Errc::timeout);
  EXPECT_EQ(p.sub->recv(in.data(), in.size(), 5'000'000, &len), Errc::timeout);
}

TEST(Udp, OversizedDatagramIsReportedNotTruncated) {
  Pair p = open_pair("udp", 64);
  auto out = pattern(1000, 1);
  ASSERT_EQ(p.pub->send(out.data(), out.size()), Errc::ok);
  std::vector<uint8_t> in(64);
  size_t len = 0;
  EXPECT_EQ(p.sub->recv(in.data(), in.size(), 2'000'000'000, &len), Errc::too_big);
}

TEST(Tcp, RoundTrip) {
  round_trip("tcp", 32);
  round_trip("tcp", 4u << 20);
}

TEST(Tcp, ManyMessagesKeepTheirBoundaries) {
  Pair p = open_pair("tcp", 100000);
  std::thread writer([&] {
    for (size_t i = 0; i < 2000; ++i) {
      auto m = pattern(1 + (i * 7919) % 100000, uint8_t(i));
      ASSERT_EQ(p.pub->send(m.data(), m.size()), Errc::ok);
    }
  });
  std::vector<uint8_t> in(100000);
  for (size_t i = 0; i < 2000; ++i) {
    size_t len = 0;
    Errc e;
    while ((e = p.sub->recv(in.data(), in.size(), 0, &len)) == Errc::timeout) {
    }
    ASSERT_EQ(e, Errc::ok);
    auto want = pattern(1 + (i * 7919) % 100000, uint8_t(i));
    ASSERT_EQ(len, want.size());
    ASSERT_TRUE(std::equal(want.begin(), want.end(), in.begin()));
  }
  writer.join();
}

TEST(Tcp, OversizedMessageIsSkippedAndTheStreamGoesOn) {
  Pair p = open_pair("tcp", 64);
  auto big = pattern(300000, 3), small = pattern(64, 4);
  ASSERT_EQ(p.pub->send(big.data(), big.size()), Errc::ok);
  ASSERT_EQ(p.pub->send(small.data(), small.size()), Errc::ok);
  std::vector<uint8_t> in(64);
  size_t len = 0;
  EXPECT_EQ(p.sub->recv(in.data(), in.size(), 2'000'000'000, &len), Errc::too_big);
  ASSERT_EQ(p.sub->recv(in.data(), in.size(), 2'000'000'000, &len), Errc::ok);
  EXPECT_EQ(in, small);
}

TEST(Tcp, PeerCloseIsReported) {
  Pair p = open_pair("tcp", 64);
  p.pub->close();
  std::vector<uint8_t> in(64);
  size_t len = 0;
  EXPECT_EQ(p.sub->recv(in.data(), in.size(), 2'000'000'000, &len), Errc::closed);
}

TEST(Registry, ListsBuiltAdapters) {
  int n = 0;
  for (const AdapterEntry* e = adapters_begin(); e != adapters_end(); ++e, ++n) EXPECT_NE(make_adapter(e->name), nullptr);
  EXPECT_GE(n, 2);
  EXPECT_EQ(make_adapter("nope"), nullptr);
}

#ifdef MWPERF_WITH_CYCLONEDDS
TEST(CycloneDds, RoundTrip) {
  round_trip("cyclonedds", 32);
  round_trip("cyclonedds", 1u << 20);
}
TEST(CycloneDds, KeyedReliableListener) {
  AdapterConfig c;
  c.instances = 1000;
  c.reliability = "reliable";
  c.receive = "listener";
  round_trip("cyclonedds", 256, c);
}
TEST(CycloneDds, RefusesAsyncAndShm) {
  AdapterConfig c;
  c.async = true;
  EXPECT_NE(unsupported_option("cyclonedds", make_adapter("cyclonedds")->caps(), c), "");
  c.async = false;
  c.transport = "shm";
  EXPECT_NE(unsupported_option("cyclonedds", make_adapter("cyclonedds")->caps(), c).find("--transport shm"),
            std::string::npos);
}
#endif

#ifdef MWPERF_WITH_FASTDDS
TEST(FastDds, RoundTripUdp) {
  AdapterConfig c;
  c.transport = "udp";
  round_trip("fastdds", 32, c);
  round_trip("fastdds", 1u << 20, c);
}
TEST(FastDds, RoundTripShmKeyedWaitset) {
  AdapterConfig c;
  c.transport = "shm";
  c.instances = 100;
  c.receive = "waitset";
  round_trip("fastdds", 4096, c);
}
#endif

TEST(Capabilities, RawSocketsRefuseDdsOptions) {
  AdapterConfig c;
  c.durability = "transient-local";
  EXPECT_EQ(unsupported_option("udp", make_adapter("udp")->caps(), c), "--durability transient-local: not supported by udp");
  c = AdapterConfig{};
  c.reliability = "best-effort";
  EXPECT_NE(unsupported_option("tcp", make_adapter("tcp")->caps(), c), "");
  c.reliability = "reliable";
  EXPECT_EQ(unsupported_option("tcp", make_adapter("tcp")->caps(), c), "");
}
