// Agent pairs (--reuse, core/pair.h, parse_next in core/options.h): the next
// point's options from its `next` line, what may not change, its own
// sequence space; one listener for the pair's life, each point's receiver
// plugged into it and unplugged before its session goes.
#include <gtest/gtest.h>

#include <vector>

#include "core/options.h"
#include "core/pair.h"

using namespace mwperf;

namespace {

Options base(std::vector<const char*> extra = {}) {
  std::vector<const char*> args = {"mwperf-agent", "run", "--role", "pub",  "--mw",    "udp",  "--mode",      "rate",
                                   "--size",       "64",  "--rate", "1000", "--reuse", "4096", "--seq-start", "5"};
  args.insert(args.end(), extra.begin(), extra.end());
  Options o;
  EXPECT_EQ(parse_options(int(args.size()), args.data(), &o), "");
  return o;
}

}  // namespace

TEST(Pair, NextChangesOnlyWhatItGives) {
  const Options o = base();
  Options next;
  ASSERT_EQ(parse_next(o, "--size 2048 --rate 500", 1, &next), "");
  EXPECT_EQ(next.size, 2048u);
  EXPECT_EQ(next.rate_hz, 500.0);
  EXPECT_EQ(next.duration_ns, o.duration_ns);
  EXPECT_EQ(next.reuse, 4096u);
  EXPECT_EQ(next.pair_point, 1u);
  // its own sequence space: 5 + 1 << 40, and 5 + 3 << 40 for the fourth point
  EXPECT_EQ(next.seq_start, 5u + (uint64_t(1) << 40));
  Options fourth;
  ASSERT_EQ(parse_next(o, "--size 64", 3, &fourth), "");
  EXPECT_EQ(fourth.seq_start, 5u + (uint64_t(3) << 40));
  EXPECT_EQ(fourth.size, 64u);
}

TEST(Pair, NextRefusesWhatCannotChange) {
  const Options o = base();
  Options next;
  EXPECT_EQ(parse_next(o, "--size 8192", 1, &next),
            "next: --size: '8192' must be at most --reuse 4096 (the largest message the agent pair is opened for)");
  EXPECT_EQ(parse_next(o, "--reliability reliable", 1, &next),
            "next: --reliability: cannot change between the points of one agent pair (a fresh pair can)");
  EXPECT_EQ(parse_next(o, "--mode latency", 1, &next),
            "next: --mode: cannot change between the points of one agent pair (a fresh pair can)");
  EXPECT_EQ(parse_next(o, "--size", 1, &next), "next: --size: missing value");
  EXPECT_EQ(parse_next(o, "--size 64 --size 128", 1, &next), "next: --size: given twice");
  EXPECT_EQ(parse_next(o, "--demand 5", 1, &next), "next: --demand: only with --mode burst");
  EXPECT_EQ(parse_next(o, "--size 64", kMaxPairPoints, &next),
            "next: an agent pair serves at most 256 points (start a fresh pair)");
  Options single;
  const char* args[] = {"mwperf-agent", "run", "--role", "sub", "--mw", "udp"};
  ASSERT_EQ(parse_options(6, args, &single), "");
  EXPECT_EQ(parse_next(single, "--size 64", 1, &next), "next: this agent was not started with --reuse");
}

TEST(Pair, NextUnescapesItsWords) {
  const Options o = base();
  Options next;
  ASSERT_EQ(parse_next(o, "--samples-out /tmp/a%20b%25c.bin", 1, &next), "");
  EXPECT_EQ(next.samples_out, "/tmp/a b%c.bin");
  EXPECT_EQ(parse_next(o, "--samples-out /tmp/a%2", 1, &next), "next: '/tmp/a%2' has a bad %-escape");
}

TEST(Pair, ReuseBelowTheSizeIsRefused) {
  const char* args[] = {"mwperf-agent", "run", "--role", "sub", "--mw", "udp", "--size", "2048", "--reuse", "1024"};
  Options o;
  EXPECT_EQ(parse_options(10, args, &o),
            "--size: '2048' must be at most --reuse 1024 (the largest message the agent pair is opened for)");
  EXPECT_EQ(adapter_config(base()).size, 4096u);  // the pair's middleware is opened for its largest message
}

namespace {

// An adapter that delivers what the test hands it to the one receiver it was given.
class Listened final : public Adapter {
 public:
  const Description& description() const override { return d_; }
  std::string version() const override { return "0"; }
  std::string effective_config() const override { return "{}"; }
  Errc open(const AdapterConfig&) override { return Errc::ok; }
  Errc wait_matched(int64_t) override { return Errc::ok; }
  Errc send(const uint8_t*, size_t) override { return Errc::ok; }
  Errc recv(const uint8_t**, size_t*, int64_t) override { return Errc::timeout; }
  Errc listen(Receiver* r) override {
    ++listens;
    receiver = r;
    return Errc::ok;
  }
  void close() override {}
  void deliver(size_t len) {
    const uint8_t b[8] = {};
    receiver->on_message(b, len);
  }
  Description d_;
  Receiver* receiver = nullptr;
  int listens = 0;
};

struct Counter final : Receiver {
  void on_message(const uint8_t*, size_t len) override { got += len; }
  size_t got = 0;
};

}  // namespace

TEST(Pair, OneListenerForThePairEachPointsReceiverInTurn) {
  auto owned = std::make_unique<Listened>();
  Listened& inner = *owned;
  PairAdapter pair(std::move(owned));
  Counter first, second;
  ASSERT_EQ(pair.listen(&first), Errc::ok);
  inner.deliver(3);
  pair.detach();     // the first point's session may go
  inner.deliver(5);  // between two points: nobody's
  ASSERT_EQ(pair.listen(&second), Errc::ok);
  inner.deliver(7);
  EXPECT_EQ(inner.listens, 1);  // the middleware's listener is set once
  EXPECT_EQ(first.got, 3u);
  EXPECT_EQ(second.got, 7u);
}
