#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <vector>

#include "core/floor.h"
#include "core/options.h"
#include "util/clock.h"

using namespace mwperf;

namespace {

// `floor`'s options are rows of the option table: parsed as every command's are.
std::string parse(std::vector<const char*> args, FloorOptions* o) {
  args.insert(args.begin(), {"mwperf-agent", "floor"});
  Options options;
  const std::string error = parse_options(int(args.size()), args.data(), &options);
  *o = options.floor;
  return error;
}

std::unique_ptr<PingLink> make(const std::string& kind) {
  return kind == "shm" ? make_shm_link() : make_socket_link(kind == "udp");
}

// A peer that never answers (or, `dies`, one that is gone at once): the
// ping-pong must fail with the reason, within its timeout, and leave no process.
class Mute : public PingLink {
 public:
  Mute(std::unique_ptr<PingLink> inner, bool dies) : inner_(std::move(inner)), dies_(dies) {}
  const char* kind() const override { return inner_->kind(); }
  const char* method() const override { return inner_->method(); }
  std::string open(size_t size, WaitMode wait, int64_t timeout_ns) override {
    return inner_->open(size, wait, timeout_ns);
  }
  void forked(bool peer) override { inner_->forked(peer); }
  void serve() override {
    if (dies_) return;
    for (;;) pause();
  }
  std::string ping(uint64_t seq) override { return inner_->ping(seq); }

 private:
  std::unique_ptr<PingLink> inner_;
  bool dies_;
};

// A short measurement; an answer may take `timeout_ns` (a busy machine can
// hold an unpinned peer back for a while: only the mute-peer test needs it short).
FloorOptions quick(WaitMode wait, int64_t timeout_ns = 5'000'000'000) {
  FloorOptions o = Options().floor;  // the table's defaults
  o.cpu_a = o.cpu_b = -1;
  o.wait = wait;
  o.budget_ns = 20'000'000;
  o.timeout_ns = timeout_ns;
  return o;
}

bool no_child_left() { return waitpid(-1, nullptr, WNOHANG) < 0 && errno == ECHILD; }

}  // namespace

TEST(Floor, OptionsAreParsedAndBadValuesNamed) {
  FloorOptions o;
  EXPECT_EQ(parse({"--sizes", "32,1024,63000", "--cpus", "0,1", "--wait", "spin", "--kinds", "shm,udp"}, &o), "");
  EXPECT_EQ(o.sizes, (std::vector<size_t>{32, 1024, 63000}));
  EXPECT_EQ(o.cpu_a, 0);
  EXPECT_EQ(o.cpu_b, 1);
  EXPECT_EQ(o.wait, WaitMode::spin);
  EXPECT_EQ(o.kinds, (std::vector<std::string>{"shm", "udp"}));
  EXPECT_EQ(parse({"--sizes", "32", "--cpus", "-1,-1"}, &o), "");
  EXPECT_STREQ(placement_name(o.cpu_a, o.cpu_b), "unpinned");
  EXPECT_NE(parse({"--sizes", "0"}, &o).find("'0'"), std::string::npos);
  EXPECT_NE(parse({"--sizes", "32,x"}, &o).find("'32,x'"), std::string::npos);
  EXPECT_NE(parse({"--sizes", "32", "--cpus", "0"}, &o).find("'0'"), std::string::npos);
  EXPECT_NE(parse({"--sizes", "32", "--wait", "nap"}, &o).find("'nap'"), std::string::npos);
  EXPECT_NE(parse({"--sizes", "32", "--kinds", "tcp"}, &o).find("'tcp'"), std::string::npos);
  EXPECT_EQ(parse({"--sizes", "32", "--budget", "5"}, &o),
            "--budget: '5' must be a whole number of nanoseconds from 1000000 to 600000000000");
  EXPECT_EQ(parse({"--sizes", "32", "--kinds", "udp,tcp"}, &o),
            "--kinds: 'udp,tcp' must be 1 to 4 comma-separated words of: memcpy, unix, udp, shm");
  EXPECT_EQ(parse({"--sizes", "32,", "--cpus", "0,1"}, &o),
            "--sizes: '32,' must be 1 to 256 comma-separated whole numbers of bytes from 1 to 67108864");
  EXPECT_EQ(parse({"--sizes", "32", "--iterations", "5", "--iterations", "6"}, &o), "--iterations: given twice");
  EXPECT_EQ(parse({"--sizes", "32", "--duration", "5"}, &o), "--duration: unknown option");
  FloorOptions fresh;
  EXPECT_EQ(parse({"--cpus", "0,1"}, &fresh), "--sizes: missing");
  // The table's defaults: every kind, unpinned, blocking, 100 ms, 1 s, 100000 samples.
  EXPECT_EQ(parse({"--sizes", "64"}, &fresh), "");
  EXPECT_EQ(fresh.kinds, (std::vector<std::string>{"memcpy", "unix", "udp", "shm"}));
  EXPECT_EQ(fresh.cpu_a, -1);
  EXPECT_EQ(fresh.wait, WaitMode::block);
  EXPECT_EQ(fresh.budget_ns, 100'000'000);
  EXPECT_EQ(fresh.timeout_ns, 1'000'000'000);
  EXPECT_EQ(fresh.iterations, 100'000u);
}

TEST(Floor, UdpRefusesWhatADatagramCannotCarry) {
  auto link = make_socket_link(true);
  EXPECT_NE(link->open(kUdpMaxPayload + 1, WaitMode::block, 1'000'000'000).find("65507"), std::string::npos);
  EXPECT_EQ(make_socket_link(true)->open(kUdpMaxPayload, WaitMode::block, 1'000'000'000), "");
}

TEST(Floor, EveryPingPongIsAnsweredWithTheMessageSent) {
  for (const char* kind : {"unix", "udp", "shm"}) {
    for (WaitMode wait : {WaitMode::block, WaitMode::spin}) {
      for (size_t size : {size_t(1), size_t(100), size_t(200000)}) {
        if (std::string(kind) == "udp" && size > kUdpMaxPayload) continue;
        SCOPED_TRACE(std::string(kind) + " " + std::to_string(size) + (wait == WaitMode::spin ? " spin" : " block"));
        auto link = make(kind);
        LatencyStats rtt;
        const FloorResult r = floor_pingpong(quick(wait), *link, size, rtt);
        EXPECT_EQ(r.error, "");
        EXPECT_GT(rtt.count(), 0u);
        EXPECT_GT(rtt.min(), 0);
        EXPECT_TRUE(no_child_left());
      }
    }
  }
}

TEST(Floor, APeerThatDoesNotAnswerFailsThePingPongWithTheReason) {
  for (const char* kind : {"unix", "udp", "shm"}) {
    for (WaitMode wait : {WaitMode::block, WaitMode::spin}) {
      for (bool dies : {false, true}) {
        SCOPED_TRACE(std::string(kind) + (dies ? " dies" : " mute") + (wait == WaitMode::spin ? " spin" : " block"));
        Mute link(make(kind), dies);
        LatencyStats rtt;
        const int64_t t0 = now_ns();
        const FloorResult r = floor_pingpong(quick(wait, 200'000'000), link, 64, rtt);
        const int64_t took = now_ns() - t0;
        EXPECT_NE(r.error.find("the peer (pid "), std::string::npos) << r.error;
        // A mute peer: the timeout (200 ms); a dead one: its socket closed or refused, or the timeout.
        if (!dies) {
          EXPECT_NE(r.error.find("no answer within 0.2 s"), std::string::npos) << r.error;
        }
        EXPECT_LT(took, 2'000'000'000);
        EXPECT_EQ(rtt.count(), 0u);
        EXPECT_TRUE(no_child_left());
      }
    }
  }
}

TEST(Floor, MemcpyMakesEveryCopyOfABatch) {
  // Were copies of a batch left out (by the compiler), a batch of 256 would
  // take about as long as a batch of one.
  FloorOptions o = quick(WaitMode::block);
  LatencyStats one, many;
  ASSERT_EQ(floor_memcpy(o, 4096, 1, one).error, "");
  ASSERT_EQ(floor_memcpy(o, 4096, 256, many).error, "");
  EXPECT_GT(many.percentile_ppm(500000).v, 64 * one.percentile_ppm(500000).v);
  EXPECT_EQ(memcpy_batch(64), 1024u);
  EXPECT_EQ(memcpy_batch(4 << 20), 1u);
}
