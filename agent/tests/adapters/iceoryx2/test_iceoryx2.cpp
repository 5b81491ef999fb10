// What is particular to the iceoryx2 adapter (the checks every adapter gets
// are in test_adapters.cpp): a reliable writer's bounded wait, and a reader
// asleep on iceoryx2's event woken by every sample (no lost wake-up).
#ifdef MWPERF_WITH_ICEORYX2
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "../pairs.h"

using namespace mwperf;

// A reliable writer whose reader stopped taking: iceoryx2 retries a full
// buffer, but gives up after its blocking time (a send timeout, as DDS's
// max_blocking_time), never holding the writer for good.
TEST(Iceoryx2, AReliableWriterToAStalledReaderGivesUp) {
  AdapterConfig c;
  c.reliability = "reliable";
  c.history_depth = 4;
  Pair p = open_pair("iceoryx2", 64, c);
  const auto m = pattern(64, 1);
  auto sending = std::async(std::launch::async, [&] {
    for (int i = 0; i < 100; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      const Errc e = p.pub->send(m.data(), m.size());
      if (e != Errc::ok) return std::make_pair(e, std::chrono::steady_clock::now() - t0);
    }
    return std::make_pair(Errc::ok, std::chrono::steady_clock::duration{});
  });
  if (sending.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    ADD_FAILURE() << "the send to a stalled reader never returned";
    std::_Exit(1);
  }
  const auto [e, took] = sending.get();
  EXPECT_EQ(e, Errc::timeout) << p.pub->last_error();
  EXPECT_GE(took, std::chrono::milliseconds(90));
  EXPECT_LT(took, std::chrono::seconds(2));
}

// A reliable writer that keeps a one-sample buffer full and a reader asleep on
// iceoryx2's event between samples (both on one core: the datagram wakes the
// reader before the writer marks it sent): every sample wakes the reader, so
// no send waits out its blocking time (after a lost wake-up every one does).
TEST(Iceoryx2, AReaderWaitingForAnEventIsWokenByEverySample) {
  AdapterConfig c;
  c.reliability = "reliable";
  c.history_depth = 1;
  Pair p = open_pair("iceoryx2", 64, c);
  constexpr int kSamples = 200000;
  std::atomic<int> received{0};
  cpu_set_t one, before;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  pthread_getaffinity_np(pthread_self(), sizeof before, &before);
  pthread_setaffinity_np(pthread_self(), sizeof one, &one);
  std::thread reader([&] {
    const uint8_t* d = nullptr;
    size_t n = 0;
    for (Errc e = Errc::ok;
         received.load() >= 0 && received.load() < kSamples && (e == Errc::ok || e == Errc::timeout);)
      if ((e = p.sub->recv(&d, &n, -1)) == Errc::ok) received.fetch_add(1);  // untimed: a sample or the wake below
  });
  const auto m = pattern(64, 2);
  int sent = 0;
  Errc e = Errc::ok;
  for (const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
       sent < kSamples && std::chrono::steady_clock::now() < end && (e = p.pub->send(m.data(), m.size())) == Errc::ok;)
    ++sent;
  EXPECT_EQ(e, Errc::ok) << "send " << sent << " of " << kSamples << ": " << p.pub->last_error();
  for (int i = 0; i < 100 && received.load() < sent; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(received.load(), sent);
  received.store(-1'000'000'000);
  p.sub->wake();
  reader.join();
  pthread_setaffinity_np(pthread_self(), sizeof before, &before);
}

// The state the race above leaves, set up by hand: the listener's datagram is
// gone but iceoryx2 still marks its notification as delivered (a notify
// between the listener's reset of the mark and its emptying of the socket).
// While the mark stands, iceoryx2's notifier writes no datagram, so a reader
// that only polls the socket sleeps through the next sample; the reader must
// clear the mark before it sleeps.
namespace {
// Reads every datagram waiting on this process's iceoryx2 listener sockets
// (unix datagram sockets bound under mwperf's iceoryx2 root); how many.
int consume_listener_datagrams() {
  int n = 0;
  for (int fd = 0; fd < 4096; ++fd) {
    int type = 0;
    socklen_t tl = sizeof type;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0 || type != SOCK_DGRAM) continue;
    sockaddr_un a{};
    socklen_t al = sizeof a;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&a), &al) != 0 || a.sun_family != AF_UNIX) continue;
    if (std::string(a.sun_path).rfind("/tmp/mwperf-iceoryx2/", 0) != 0) continue;
    uint8_t b[64];
    while (recv(fd, b, sizeof b, MSG_DONTWAIT) > 0) ++n;
  }
  return n;
}
}  // namespace

TEST(Iceoryx2, AReaderIsWokenAfterItsEventsDatagramWasConsumedBehindItsBack) {
  AdapterConfig c;
  c.reliability = "reliable";
  c.history_depth = 1;
  Pair p = open_pair("iceoryx2", 64, c);
  const auto first = pattern(64, 1), second = pattern(64, 2);
  ASSERT_EQ(p.pub->send(first.data(), first.size()), Errc::ok) << p.pub->last_error();
  std::vector<uint8_t> got;
  ASSERT_EQ(recv_one(*p.sub, &got), Errc::ok);  // taken without waiting: the datagram and its mark stay
  ASSERT_EQ(got, first);
  ASSERT_GE(consume_listener_datagrams(), 1) << "no datagram of the first sample's notification found";
  auto waiting = std::async(std::launch::async, [&] {
    const uint8_t* d = nullptr;
    size_t n = 0;
    const Errc e = p.sub->recv(&d, &n, 3'000'000'000);  // asleep before the second sample comes
    return e == Errc::ok && std::vector<uint8_t>(d, d + n) == second;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(p.pub->send(second.data(), second.size()), Errc::ok) << p.pub->last_error();
  EXPECT_TRUE(waiting.get()) << "the reader slept through the second sample (a lost wake-up)";
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  EXPECT_LT(took.count(), 1000) << "ms from the send to the reader's return";
}
#endif
