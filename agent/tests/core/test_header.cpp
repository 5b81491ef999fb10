#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/header.h"

using namespace mwperf;

namespace {
std::vector<uint8_t> message(uint32_t run_id, size_t size, uint8_t flags = 0) {
  std::vector<uint8_t> b(size, 0xAB);
  encode_header(Header{kMagic, kHeaderVersion, flags, 0, run_id, uint32_t(size), 42, -7}, b.data());
  return b;
}
}  // namespace

TEST(Header, RoundTrip) {
  auto b = message(9, 100, kFlagPing);
  Header h;
  ASSERT_EQ(decode_header(b.data(), b.size(), 9, &h), HeaderCheck::ok);
  EXPECT_EQ(h.seq, 42u);
  EXPECT_EQ(h.send_ns, -7);
  EXPECT_EQ(h.flags, kFlagPing);
  EXPECT_EQ(h.size, 100u);
}

TEST(Header, RejectsGarbage) {
  Header h;
  std::vector<uint8_t> zeros(64, 0);
  EXPECT_EQ(decode_header(zeros.data(), zeros.size(), 1, &h), HeaderCheck::bad_magic);
  std::vector<uint8_t> text(64);
  std::memcpy(text.data(), "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 27);
  EXPECT_EQ(decode_header(text.data(), text.size(), 1, &h), HeaderCheck::bad_magic);
  auto b = message(1, 64);
  EXPECT_EQ(decode_header(b.data(), 31, 1, &h), HeaderCheck::too_short);
  EXPECT_EQ(decode_header(b.data(), 0, 1, &h), HeaderCheck::too_short);
}

TEST(Header, RejectsOtherRunsAndBadFields) {
  Header h;
  auto b = message(1, 64);
  EXPECT_EQ(decode_header(b.data(), b.size(), 2, &h), HeaderCheck::wrong_run);
  EXPECT_EQ(decode_header(b.data(), 63, 1, &h), HeaderCheck::wrong_size);  // truncated
  b[4] = 99;  // version
  EXPECT_EQ(decode_header(b.data(), b.size(), 1, &h), HeaderCheck::bad_version);
  b = message(1, 64, 0x80);
  EXPECT_EQ(decode_header(b.data(), b.size(), 1, &h), HeaderCheck::bad_flags);
}

TEST(Header, FuzzedBytesNeverPassAsAnotherRun) {
  uint64_t x = 88172645463325252ULL;
  std::vector<uint8_t> b(48);
  Header h;
  for (int i = 0; i < 100000; ++i) {
    for (auto& c : b) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      c = uint8_t(x);
    }
    EXPECT_NE(decode_header(b.data(), b.size(), 12345, &h), HeaderCheck::ok);
  }
}
