// Every registered adapter, the same checks (a new adapter is tested by being
// registered): bytes in, the same bytes out, both directions, every receive
// mode it lists; its description is consistent. Then what is particular to
// the raw sockets.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/description.h"
#include "pairs.h"
#include "plugins/registry.h"

using namespace mwperf;

namespace {

std::vector<std::string> registered() {
  std::vector<std::string> names;
  for (const AdapterEntry* e = adapters_begin(); e != adapters_end(); ++e)
    if (e->make != nullptr) names.push_back(e->name);  // companions are tested in their own test binary
  return names;
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size() && !list.empty()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    out.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// An adapter whose middleware needs a daemon (the description's service) is
// tested where the harness started one for it (MWPERF_TEST_SERVICE_<NAME>=1,
// see tests/with-roudi.sh), and skipped elsewhere.
class EveryAdapter : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string service = make_adapter(GetParam())->description().service;
    if (service.empty()) return;
    std::string var = "MWPERF_TEST_SERVICE_";
    for (char c : service) var += char(std::toupper(static_cast<unsigned char>(c)));
    if (std::getenv(var.c_str()) == nullptr) GTEST_SKIP() << "needs its " << service << " (run with " << var << "=1)";
  }
};

}  // namespace

TEST_P(EveryAdapter, DescriptionIsConsistent) {
  auto a = make_adapter(GetParam());
  const Description& d = a->description();
  EXPECT_GE(d.max_size, 32u);
  EXPECT_FALSE(split(d.transports).empty());
  const auto rels = split(d.reliabilities);
  EXPECT_NE(std::find(rels.begin(), rels.end(), d.reliability), rels.end()) << d.reliability;
  if (*d.receives) {
    const auto recs = split(d.receives);
    EXPECT_NE(std::find(recs.begin(), recs.end(), d.receive), recs.end()) << d.receive;
  }
  EXPECT_FALSE(a->version().empty());
  Options o;
  const std::string size = std::to_string(d.max_size + 1);
  const char* argv[] = {"mwperf-agent", "run", "--role", "pub", "--mw", GetParam().c_str(), "--size", size.c_str()};
  ASSERT_EQ(parse_options(8, argv, &o), "");
  EXPECT_NE(refuse(GetParam(), d, o), "");
}

TEST_P(EveryAdapter, RoundTripInEveryPullMode) {
  const Description& d = make_adapter(GetParam())->description();
  std::vector<std::string> modes;
  for (const std::string& r : split(d.receives))
    if (r != "listener") modes.push_back(r);
  if (!*d.receives) modes.push_back("");
  for (const std::string& mode : modes) {
    for (size_t size : {size_t(32), size_t(1024), std::min<size_t>(d.max_size, 1u << 20)}) {
      AdapterConfig c;
      c.receive = mode;
      Pair p = open_pair(GetParam(), size, c);
      const auto out = pattern(size, 7);
      std::vector<uint8_t> in, back;
      ASSERT_EQ(p.pub->send(out.data(), out.size()), Errc::ok) << p.pub->last_error();
      ASSERT_EQ(recv_one(*p.sub, &in), Errc::ok) << mode << " " << size << " " << p.sub->last_error();
      EXPECT_EQ(in, out);
      ASSERT_EQ(p.sub->send(in.data(), in.size()), Errc::ok) << p.sub->last_error();  // and back: the echo
      ASSERT_EQ(recv_one(*p.pub, &back), Errc::ok) << p.pub->last_error();
      EXPECT_EQ(back, out);
    }
  }
}

// The echo where the middleware lends (Adapter::loan): the received message,
// still the middleware's, copied into the loan by its own path and changed
// there, goes back as changed; up to 4 MiB, over every transport it lists.
TEST_P(EveryAdapter, AnEchoWrittenIntoALoanGoesBackAsChanged) {
  auto probe = make_adapter(GetParam());
  if (!probe->can_loan()) GTEST_SKIP() << "lends nothing: the echo sends a copy";
  const Description& d = probe->description();
  std::string pull;  // received on this thread: its first receive mode that is not a listener
  for (const std::string& r : split(d.receives))
    if (pull.empty() && r != "listener") pull = r;
  for (const std::string& transport : split(d.transports)) {
    for (size_t size : {size_t(32), std::min<size_t>(d.max_size, 4u << 20)}) {
      AdapterConfig c;
      c.transport = transport;
      c.receive = pull;
      Pair p = open_pair(GetParam(), size, c);
      const auto out = pattern(size, 9);
      ASSERT_EQ(p.pub->send(out.data(), out.size()), Errc::ok) << p.pub->last_error();
      const uint8_t* in = nullptr;
      size_t n = 0;
      Errc e = Errc::timeout;
      for (int i = 0; i < 50 && e == Errc::timeout; ++i) e = p.sub->recv(&in, &n, 100'000'000);
      ASSERT_EQ(e, Errc::ok) << transport << " " << size << " " << p.sub->last_error();
      ASSERT_EQ(n, size);
      uint8_t* loan = nullptr;
      ASSERT_EQ(p.sub->loan(in, n, &loan), Errc::ok) << p.sub->last_error();
      loan[5] ^= 0xff;  // what the echo changes: Header::flags
      ASSERT_EQ(p.sub->publish_loaned(loan, n), Errc::ok) << p.sub->last_error();
      std::vector<uint8_t> back, want = out;
      want[5] ^= 0xff;
      ASSERT_EQ(recv_one(*p.pub, &back), Errc::ok) << p.pub->last_error();
      EXPECT_EQ(back, want) << transport << " " << size;
    }
  }
}

// --subscribers N --subscribers-as threads: N instances of the adapter in one process, each a subscriber
// of the one publisher, each gets every message. An adapter that cannot have
// several says so in its description (max_readers_per_process 1), and one
// whose publisher serves one subscriber has no second reader to test.
TEST_P(EveryAdapter, SeveralReadersInOneProcess) {
  const Description& d = make_adapter(GetParam())->description();
  if (d.max_readers_per_process == 1) GTEST_SKIP() << "one reader per process: " << d.readers_note;
  if (d.max_subscribers == 1) GTEST_SKIP() << "its publisher serves one subscriber";
  constexpr size_t kReaders = 3;
  AdapterConfig c;
  c.size = 256;
  c.run_id = next_run_id();
  c.fan_out = kReaders;  // every reader's stream is made for all of them
  c.role = Role::sub;
  c.receive = "";
  for (const std::string& r : split(d.receives))
    if (r != "listener") c.receive = r;  // pulled, on this thread
  std::vector<std::unique_ptr<Adapter>> subs;
  std::vector<uint16_t> ports;
  for (size_t i = 0; i < kReaders; ++i) {
    subs.push_back(make_adapter(GetParam()));
    ASSERT_EQ(subs.back()->open(c), Errc::ok) << i << ": " << subs.back()->last_error();
    ports.push_back(subs.back()->bound_port());
  }
  auto pub = make_adapter(GetParam());
  c.role = Role::pub;
  c.ports = ports;
  c.port = ports[0];
  c.subscribers = kReaders;
  ASSERT_EQ(pub->open(c), Errc::ok) << pub->last_error();
  std::vector<std::thread> matched;
  for (auto& s : subs)
    matched.emplace_back([&s] { EXPECT_EQ(s->wait_matched(10'000'000'000), Errc::ok) << s->last_error(); });
  EXPECT_EQ(pub->wait_matched(10'000'000'000), Errc::ok) << pub->last_error();
  for (auto& t : matched) t.join();
  const auto out = pattern(256, 3);
  ASSERT_EQ(pub->send(out.data(), out.size()), Errc::ok) << pub->last_error();
  for (size_t i = 0; i < kReaders; ++i) {
    std::vector<uint8_t> in;
    ASSERT_EQ(recv_one(*subs[i], &in), Errc::ok) << "reader " << i << ": " << subs[i]->last_error();
    EXPECT_EQ(in, out) << "reader " << i;
  }
  pub->close();
  for (auto& s : subs) s->close();
}

// A publisher that serves two subscribers is not matched while only one is
// there (its first samples would reach one reader and not the other), and is
// once the second comes.
TEST_P(EveryAdapter, APublisherWaitsForEverySubscriber) {
  const Description& d = make_adapter(GetParam())->description();
  if (d.max_subscribers == 1) GTEST_SKIP() << "its publisher serves one subscriber";
  if (d.max_readers_per_process == 1) GTEST_SKIP() << "one reader per process: " << d.readers_note;
  AdapterConfig c;
  c.size = 256;
  c.run_id = next_run_id(), c.fan_out = 2;
  c.role = Role::sub;
  for (const std::string& r : split(d.receives))
    if (r != "listener") c.receive = r;
  auto first = make_adapter(GetParam()), second = make_adapter(GetParam());
  ASSERT_EQ(first->open(c), Errc::ok) << first->last_error();
  const uint16_t first_port = first->bound_port();
  auto pub = make_adapter(GetParam());
  AdapterConfig pc = c;
  pc.role = Role::pub;
  pc.subscribers = 2;
  if (first_port != 0) {  // a port for the second, known to the publisher before the second is there
    ASSERT_EQ(second->open(c), Errc::ok) << second->last_error();
    pc.ports = {first_port, second->bound_port()};
    pc.port = first_port;
    second->close();  // there, but gone again: only the first is left
    second = make_adapter(GetParam());
  }
  ASSERT_EQ(pub->open(pc), Errc::ok) << pub->last_error();
  std::thread m1([&] { EXPECT_EQ(first->wait_matched(10'000'000'000), Errc::ok) << first->last_error(); });
  EXPECT_EQ(pub->wait_matched(2'000'000'000), Errc::timeout) << "matched with one of two subscribers";
  m1.join();
  if (first_port != 0) c.port = pc.ports[1];
  ASSERT_EQ(second->open(c), Errc::ok) << second->last_error();
  std::thread m2([&] { EXPECT_EQ(second->wait_matched(10'000'000'000), Errc::ok) << second->last_error(); });
  EXPECT_EQ(pub->wait_matched(10'000'000'000), Errc::ok) << pub->last_error();
  m2.join();
  for (auto* a : {&pub, &first, &second}) (*a)->close();
}

TEST_P(EveryAdapter, ListenerDeliversOnTheMiddlewaresThread) {
  const Description& d = make_adapter(GetParam())->description();
  const auto recs = split(d.receives);
  if (std::find(recs.begin(), recs.end(), "listener") == recs.end()) GTEST_SKIP() << "no listener delivery";
  AdapterConfig c;
  c.receive = "listener";
  Pair p = open_pair(GetParam(), 512, c);
  Collector got;
  ASSERT_EQ(p.sub->listen(&got), Errc::ok) << p.sub->last_error();
  for (uint8_t i = 0; i < 20; ++i) {
    const auto m = pattern(512, i);
    ASSERT_EQ(p.pub->send(m.data(), m.size()), Errc::ok);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(got.wait_for(20)) << got.got.size();
  for (uint8_t i = 0; i < 20; ++i) EXPECT_EQ(got.got[i], pattern(512, i));
  p.sub->close();
}

TEST_P(EveryAdapter, WakeEndsAnUntimedWait) {
  const Description& d = make_adapter(GetParam())->description();
  AdapterConfig c;
  for (const std::string& r : split(d.receives))
    if (r != "listener") c.receive = r;
  if (*d.receives && c.receive.empty()) GTEST_SKIP() << "listener only";
  Pair p = open_pair(GetParam(), 64, c);
  if (!p.sub->can_wake()) GTEST_SKIP() << "cannot be woken";
  std::thread w([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    p.sub->wake();
  });
  const uint8_t* data;
  size_t len;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(p.sub->recv(&data, &len, -1), Errc::timeout);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  w.join();
}

INSTANTIATE_TEST_SUITE_P(Registered, EveryAdapter, ::testing::ValuesIn(registered()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           std::string name = i.param;  // a C identifier: fastdds-jazzy is fastdds_jazzy
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

TEST(Registry, ListsBuiltAdapters) {
  EXPECT_GE(registered().size(), 1u);
  EXPECT_EQ(make_adapter("nope"), nullptr);
}

#ifdef MWPERF_WITH_UDP
TEST(Udp, RefusesOversize) {
  auto a = make_adapter("udp");
  AdapterConfig c;
  c.size = 65508;
  EXPECT_EQ(a->open(c), Errc::unsupported);
  EXPECT_NE(a->last_error().find("65507"), std::string::npos);
}

TEST(Udp, TimeoutAndPoll) {
  Pair p = open_pair("udp", 64);
  const uint8_t* d;
  size_t n;
  EXPECT_EQ(p.sub->recv(&d, &n, 0), Errc::timeout);
  EXPECT_EQ(p.sub->recv(&d, &n, 5'000'000), Errc::timeout);
}

TEST(Udp, OversizedDatagramIsReportedNotTruncated) {
  Pair p = open_pair("udp", 64);
  auto out = pattern(1000, 1);
  ASSERT_EQ(p.pub->send(out.data(), out.size()), Errc::ok);
  const uint8_t* d;
  size_t n;
  EXPECT_EQ(p.sub->recv(&d, &n, 2'000'000'000), Errc::too_big);
}

TEST(Udp, ThePublishersUntimedWaitIsWoken) {
  Pair p = open_pair("udp", 64);
  std::atomic<bool> done{false};
  std::thread w([&] {
    while (!done) {  // a wake that lands before the call is lost: repeat it, as the watchdog does
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      p.pub->wake();
    }
  });
  const uint8_t* d;
  size_t n;
  EXPECT_EQ(p.pub->recv(&d, &n, -1), Errc::timeout);
  done = true;
  w.join();
}

#endif

#ifdef MWPERF_WITH_TCP
// Both ends of a pair's connection, as the kernel has them: TCP_NODELAY set
// (transport tcp) or not (tcp-nagle, Nagle on: the base ROS 1's default
// tcpros pairs with). Each value is how many of them have it set.
std::vector<int> nodelay_of_connections_to(uint16_t port) {
  std::vector<int> out;
  for (int fd = 0; fd < 4096; ++fd) {
    int type = 0;
    socklen_t tl = sizeof type;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0 || type != SOCK_STREAM) continue;
    sockaddr_in me{}, peer{};
    socklen_t ml = sizeof me, pl = sizeof peer;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&me), &ml) != 0 || me.sin_family != AF_INET ||
        getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &pl) != 0)
      continue;  // not connected: the listening socket
    if (ntohs(me.sin_port) != port && ntohs(peer.sin_port) != port) continue;
    int on = -1;
    socklen_t ol = sizeof on;
    if (getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, &ol) == 0) out.push_back(on != 0 ? 1 : 0);
  }
  return out;
}

TEST(Tcp, NagleIsOffWithTcpAndOnWithTcpNagle) {
  for (const char* transport : {"tcp", "tcp-nagle"}) {
    AdapterConfig c;
    c.transport = transport;
    Pair p = open_pair("tcp", 64, c);
    const int want = std::string(transport) == "tcp" ? 1 : 0;
    EXPECT_EQ(nodelay_of_connections_to(p.sub->bound_port()), std::vector<int>(2, want)) << transport;
    p.pub->close();
    p.sub->close();
  }
}

TEST(Tcp, ManyMessagesKeepTheirBoundaries) {
  Pair p = open_pair("tcp", 100000);
  std::thread writer([&] {
    for (size_t i = 0; i < 2000; ++i) {
      auto m = pattern(1 + (i * 7919) % 100000, uint8_t(i));
      ASSERT_EQ(p.pub->send(m.data(), m.size()), Errc::ok);
    }
  });
  for (size_t i = 0; i < 2000; ++i) {
    const uint8_t* d = nullptr;
    size_t n = 0;
    Errc e;
    while ((e = p.sub->recv(&d, &n, 0)) == Errc::timeout) {
    }
    ASSERT_EQ(e, Errc::ok);
    auto want = pattern(1 + (i * 7919) % 100000, uint8_t(i));
    ASSERT_EQ(n, want.size());
    ASSERT_TRUE(std::equal(want.begin(), want.end(), d));
  }
  writer.join();
}

TEST(Tcp, OversizedMessageIsSkippedAndTheStreamGoesOn) {
  Pair p = open_pair("tcp", 64);
  auto big = pattern(300000, 3), small = pattern(64, 4);
  ASSERT_EQ(p.pub->send(big.data(), big.size()), Errc::ok);
  ASSERT_EQ(p.pub->send(small.data(), small.size()), Errc::ok);
  const uint8_t* d;
  size_t n;
  EXPECT_EQ(p.sub->recv(&d, &n, 2'000'000'000), Errc::too_big);
  ASSERT_EQ(p.sub->recv(&d, &n, 2'000'000'000), Errc::ok);
  EXPECT_EQ(std::vector<uint8_t>(d, d + n), small);
}

// The reader stops reading: a 16 MiB message goes in part, then stalls. It
// is given up within 1 s (the controller waits 2 s for a blocked send, not
// the 10 s it once took), and the broken stream fails every later send at once.
TEST(Tcp, AMessageStalledHalfWayIsGivenUpWithinTheControllersDeadline) {
  Pair p = open_pair("tcp", 16u << 20);
  const auto big = pattern(16u << 20, 7);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(p.pub->send(big.data(), big.size()), Errc::io);
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(took, std::chrono::milliseconds(900));
  EXPECT_LT(took, std::chrono::milliseconds(2000));
  const auto t1 = std::chrono::steady_clock::now();
  EXPECT_EQ(p.pub->send(big.data(), 64), Errc::io) << p.pub->last_error();
  EXPECT_LT(std::chrono::steady_clock::now() - t1, std::chrono::milliseconds(50));
}

TEST(Tcp, PeerCloseIsReported) {
  Pair p = open_pair("tcp", 64);
  p.pub->close();
  const uint8_t* d;
  size_t n;
  EXPECT_EQ(p.sub->recv(&d, &n, 2'000'000'000), Errc::closed);
}
#endif

#ifdef MWPERF_WITH_FASTDDS
// 4 294 968 instances of keep-last 1000: their product (2^32 + 704 samples)
// is no int32; computed as one it wrapped to 704, fewer than one instance's
// history, and the writer held at most 704 samples. As the writer has it now:
// no limit (and 10 x 10 stays 100).
TEST(FastDds, ManyInstancesOfADeepHistoryHaveNoWrappedLimit) {
  AdapterConfig c;
  c.instances = 10;
  c.history_depth = 10;
  EXPECT_NE(open_pair("fastdds", 64, c).pub->effective_config().find("\"max_samples\":100,"), std::string::npos);
  c.instances = 4'294'968;
  c.history_depth = 1000;
  Pair p = open_pair("fastdds", 64, c);
  EXPECT_NE(p.pub->effective_config().find("\"max_samples\":-1,"), std::string::npos) << p.pub->effective_config();
  const auto m = pattern(64, 5);
  ASSERT_EQ(p.pub->send(m.data(), m.size()), Errc::ok) << p.pub->last_error();
  std::vector<uint8_t> got;
  ASSERT_EQ(recv_one(*p.sub, &got), Errc::ok) << p.sub->last_error();
  EXPECT_EQ(got, m);
}
#endif
