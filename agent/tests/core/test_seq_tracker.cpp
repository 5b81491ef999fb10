#include <gtest/gtest.h>

#include <cstdint>

#include "core/seq_tracker.h"

using namespace mwperf;

TEST(SeqTracker, InOrderNoLoss) {
  SeqTracker t(0);
  for (uint64_t s = 0; s < 1000; ++s) t.on_seq(s);
  EXPECT_EQ(t.unique(), 1000u);
  EXPECT_EQ(t.lost(1000), 0u);
  EXPECT_EQ(t.missing(), 0u);
  EXPECT_EQ(t.duplicates(), 0u);
  EXPECT_EQ(t.out_of_order(), 0u);
}

TEST(SeqTracker, Gaps) {
  SeqTracker t(0);
  for (uint64_t s : {0, 1, 2, 5, 6, 9}) t.on_seq(s);  // 3,4,7,8 missing
  EXPECT_EQ(t.missing(), 4u);
  EXPECT_EQ(t.lost(10), 4u);  // 10 sent, 6 received
  EXPECT_EQ(t.lost(12), 6u);  // the last two lost too: only the count tells
  EXPECT_EQ(t.lost(-1), 4u);
}

TEST(SeqTracker, FirstSamplesLost) {
  SeqTracker t(100);
  t.on_seq(103);
  EXPECT_EQ(t.missing(), 3u);
  EXPECT_EQ(t.lost(4), 3u);
}

TEST(SeqTracker, Duplicates) {
  SeqTracker t(0);
  for (uint64_t s : {0, 1, 1, 2, 2, 2, 0}) t.on_seq(s);
  EXPECT_EQ(t.unique(), 3u);
  EXPECT_EQ(t.duplicates(), 4u);
  EXPECT_EQ(t.out_of_order(), 0u);
  EXPECT_EQ(t.lost(3), 0u);
}

TEST(SeqTracker, ReorderingIsNotLoss) {
  SeqTracker t(0);
  for (uint64_t s : {0, 2, 1, 5, 3, 4}) t.on_seq(s);
  EXPECT_EQ(t.unique(), 6u);
  EXPECT_EQ(t.out_of_order(), 3u);  // 1, 3, 4 arrived after a later one
  EXPECT_EQ(t.missing(), 0u);
  EXPECT_EQ(t.duplicates(), 0u);
  EXPECT_EQ(t.lost(6), 0u);
}

TEST(SeqTracker, LateDuplicateOfReordered) {
  SeqTracker t(0);
  for (uint64_t s : {0, 2, 1, 1}) t.on_seq(s);
  EXPECT_EQ(t.out_of_order(), 1u);
  EXPECT_EQ(t.duplicates(), 1u);
  EXPECT_EQ(t.unique(), 3u);
}

TEST(SeqTracker, SequenceWrap) {
  const uint64_t start = UINT64_MAX - 2;  // MAX-2, MAX-1, MAX, 0, 1, 2
  SeqTracker t(start);
  t.on_seq(start);
  t.on_seq(start + 1);
  t.on_seq(start + 3);  // 0: skips MAX
  t.on_seq(start + 2);  // MAX arrives late
  t.on_seq(start + 5);  // 2: skips 1
  t.on_seq(start + 5);  // duplicate across the wrap
  EXPECT_EQ(t.unique(), 5u);
  EXPECT_EQ(t.out_of_order(), 1u);
  EXPECT_EQ(t.duplicates(), 1u);
  EXPECT_EQ(t.missing(), 1u);
  EXPECT_EQ(t.lost(6), 1u);
}

TEST(SeqTracker, GapLargerThanWindow) {
  SeqTracker t(0, 128);
  t.on_seq(0);
  t.on_seq(1000);
  EXPECT_EQ(t.missing(), 999u);
  t.on_seq(999);  // inside the window: late arrival
  EXPECT_EQ(t.out_of_order(), 1u);
  EXPECT_EQ(t.missing(), 998u);
  t.on_seq(10);  // older than the window: counted out of order, fills a gap
  EXPECT_EQ(t.out_of_order(), 2u);
  EXPECT_EQ(t.missing(), 997u);
  EXPECT_EQ(t.unique(), 4u);
  EXPECT_EQ(t.lost(1001), 997u);
}

TEST(SeqTracker, BeforeFirstIsNotOfThisRun) {
  SeqTracker t(50);
  EXPECT_EQ(t.on_seq(49), SeqTracker::Verdict::before_first);  // the caller counts it as foreign
  EXPECT_EQ(t.unique(), 0u);
  EXPECT_EQ(t.duplicates(), 0u);
}

TEST(SeqTracker, VerdictsTellWhatMayBeMeasured) {
  SeqTracker t(0, 64);
  EXPECT_EQ(t.on_seq(0), SeqTracker::Verdict::fresh);
  EXPECT_EQ(t.on_seq(2), SeqTracker::Verdict::fresh);
  EXPECT_EQ(t.on_seq(1), SeqTracker::Verdict::fresh);      // late, but new
  EXPECT_EQ(t.on_seq(1), SeqTracker::Verdict::duplicate);  // never measured twice
  EXPECT_EQ(t.on_seq(200), SeqTracker::Verdict::fresh);
  EXPECT_EQ(t.on_seq(3), SeqTracker::Verdict::too_old);  // older than the window: not measured
}

TEST(SeqTracker, WindowReuseAfterManySamples) {
  SeqTracker t(0, 64);
  for (uint64_t s = 0; s < 10000; ++s) {
    if (s % 7 == 3) continue;
    t.on_seq(s);
  }
  EXPECT_EQ(t.duplicates(), 0u);
  // 1429 numbers are skipped; the last one (9999) ends the run, so only the
  // publisher's count reveals it.
  EXPECT_EQ(t.missing(), 1428u);
  EXPECT_EQ(t.lost(10000), 1429u);
  EXPECT_EQ(t.unique() + t.lost(10000), 10000u);
}
