// N:M (--publishers): three publisher sessions write one channel to one
// subscriber session that keys its sequence tracking by publisher. Ground
// truth: what the channel carried and dropped. Without the keying the three
// sequence spaces (each from 0) would collide as duplicates.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "core/control.h"
#include "core/session.h"
#include "session_harness.h"

using namespace mwperf;
using namespace mwperf::harness;

namespace {

struct Sent {
  std::vector<std::string> pubs;
  std::string sub;
};

Sent three_publishers(Channel& ch, uint32_t publishers_told) {
  Options po = options(Mode::rate, Role::pub);
  po.rate_hz = 1000;
  Options so = po;
  so.role = Role::sub;
  so.publishers = publishers_told;
  LoopAdapter sa(ch, Role::sub, false);
  AdapterConfig cfg;
  sa.open(cfg);
  StopSignal sstop;
  auto sub = make_subscriber(so, sa, sstop);
  Sent r;
  std::thread st([&] { r.sub = sub->run(0, Footprint{}).line; });
  std::vector<Options> opts(3, po);
  std::vector<std::thread> pts;
  r.pubs.resize(3);
  for (uint64_t p = 0; p < 3; ++p) {
    opts[p].seq_start = p << kPublisherShift;
    pts.emplace_back([&, p] {
      LoopAdapter pa(ch, Role::pub, false);
      pa.open(cfg);
      StopSignal pstop;
      r.pubs[p] = make_publisher(opts[p], pa, pstop)->run(0, Footprint{}).line;
      pa.close();
    });
  }
  for (auto& t : pts) t.join();
  int64_t each[3];
  for (int p = 0; p < 3; ++p) each[p] = int64_t(field(r.pubs[p], "sent"));
  sstop.request(each, 3);
  st.join();
  sa.close();
  return r;
}

}  // namespace

TEST(Publishers, EachPublishersSamplesAreCountedInItsOwnSequenceSpace) {
  Channel ch;
  ch.drop_every = 10;  // every 10th datagram of the channel, whoever sent it
  const Sent r = three_publishers(ch, 3);
  double sent = 0;
  for (const auto& p : r.pubs) sent += field(p, "sent");
  EXPECT_EQ(sent, double(ch.data_sent));
  EXPECT_GT(sent, 600);
  EXPECT_EQ(field(r.sub, "received"), double(ch.data_sent - ch.dropped));
  EXPECT_EQ(field(r.sub, "lost"), double(ch.dropped));
  EXPECT_EQ(field(r.sub, "duplicates"), 0);
  // each publisher's own counts: its sent is what the sub knew, its lost what is missing of it
  double lost = 0;
  const std::string per = r.sub.substr(r.sub.find("\"per_publisher\":"));
  for (int p = 0; p < 3; ++p) {
    const size_t at = per.find("{\"publisher\":" + std::to_string(p));
    ASSERT_NE(at, std::string::npos);
    const std::string one = per.substr(at, per.find('}', at) - at + 1);
    EXPECT_EQ(field(one, "sent_known"), field(r.pubs[p], "sent"));
    EXPECT_EQ(field(one, "received") + field(one, "lost"), field(r.pubs[p], "sent"));
    EXPECT_LE(field(one, "seq_span"), field(r.pubs[p], "sent"));  // its own numbers, never another's
    EXPECT_GE(field(one, "seq_span"), field(one, "received"));
    lost += field(one, "lost");
  }
  EXPECT_EQ(lost, double(ch.dropped));
}

TEST(Publishers, ASubscriberToldOfOneCannotTellOrder) {
  // The control: the same three publishers to a subscriber that tracks one
  // sequence space. Publishers 1 and 2 number from 2^48, far ahead of
  // publisher 0: in one space every sample of an earlier publisher after a
  // later one's is out of order, and nothing is counted per publisher.
  Channel ch;
  const Sent r = three_publishers(ch, 1);
  EXPECT_GT(field(r.sub, "out_of_order"), 100);
  EXPECT_EQ(r.sub.find("per_publisher"), std::string::npos);
}
