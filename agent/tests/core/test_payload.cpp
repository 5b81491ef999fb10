// --payload: what every message's body holds (core/payload.h), and the
// per-publisher counts of `stop S0,S1,...` (core/control.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "core/control.h"
#include "core/header.h"
#include "core/payload.h"

using namespace mwperf;

namespace {

std::string write_file(const std::vector<uint8_t>& bytes) {
  char path[] = "/tmp/mwperf-payload-XXXXXX";
  const int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(write(fd, bytes.data(), bytes.size()), ssize_t(bytes.size()));
  close(fd);
  return path;
}

}  // namespace

TEST(Payload, FileChunksInTurn) {
  const size_t size = kHeaderSize + 10;
  std::vector<uint8_t> bytes(35);  // three whole 10-byte chunks and a tail of 5, never sent
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t(i * 7 + 1);
  const std::string path = write_file(bytes);
  Payload p;
  ASSERT_EQ(p.load("file:" + path, size), "");
  EXPECT_EQ(p.chunks(), 3u);
  for (uint64_t k = 0; k < 7; ++k) {
    const uint8_t* m = p.message(k);
    EXPECT_EQ(std::vector<uint8_t>(m + kHeaderSize, m + size),
              std::vector<uint8_t>(bytes.begin() + (k % 3) * 10, bytes.begin() + (k % 3) * 10 + 10));
    EXPECT_TRUE(p.matches(m, size, k));
    EXPECT_FALSE(p.matches(m, size, k + 1));  // another chunk's bytes
  }
  unlink(path.c_str());
}

TEST(Payload, RefusesWhatCannotMakeASample) {
  EXPECT_NE(Payload::check("file:/nonexistent/mwperf", 64), "");
  const std::string path = write_file(std::vector<uint8_t>(31));
  EXPECT_NE(Payload::check("file:" + path, 64), "");  // 31 < 64 - 32
  EXPECT_EQ(Payload::check("file:" + path, 63), "");
  EXPECT_NE(Payload::check("gzip", 64), "");
  unlink(path.c_str());
}

TEST(Payload, KindsDiffer) {
  Payload zeros, random, pattern;
  ASSERT_EQ(zeros.load("zeros", 1024), "");
  ASSERT_EQ(random.load("random", 1024), "");
  ASSERT_EQ(pattern.load("pattern", 1024), "");
  size_t nonzero = 0;
  for (size_t i = kHeaderSize; i < 1024; ++i) {
    EXPECT_EQ(zeros.message(0)[i], 0);
    EXPECT_EQ(pattern.message(5)[i], uint8_t(i));
    nonzero += random.message(0)[i] != 0;
  }
  EXPECT_GT(nonzero, 950u);
  EXPECT_FALSE(random.matches(pattern.message(0), 1024, 0));
}

TEST(StopSignal, EachPublishersCount) {
  StopSignal s;
  const int64_t each[3] = {10, 20, 30};
  s.request(each, 3);
  EXPECT_EQ(s.sent(), 60);
  EXPECT_EQ(s.sent_of(1, 3), 20);
  EXPECT_EQ(s.sent_of(2, 3), 30);
  StopSignal one;
  one.request(42);
  EXPECT_EQ(one.sent_of(0, 1), 42);
  EXPECT_EQ(one.sent_of(0, 3), -1);  // one total for three publishers: none's own is known
}
