#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/header.h"
#include "util/siphash.h"

using namespace mwperf;

namespace {
const RunKey kKey = key_of_run_id(9);

std::vector<uint8_t> message(const RunKey& key, size_t size, uint8_t flags = 0, uint64_t seq = 42,
                             int64_t send_ns = -7) {
  std::vector<uint8_t> b(size, 0xAB);
  encode_header(Header{kMagic, kHeaderVersion, flags, {}, uint32_t(size), seq, send_ns}, key, b.data());
  return b;
}
}  // namespace

// The paper's test vector (Aumasson and Bernstein, appendix A): SipHash-2-4,
// key 00 01 .. 0f, message 00 01 .. 0e.
TEST(SipHash, MatchesThePapersVector) {
  uint8_t k[16], m[15];
  for (int i = 0; i < 16; ++i) k[i] = uint8_t(i);
  for (int i = 0; i < 15; ++i) m[i] = uint8_t(i);
  SipKey key;
  std::memcpy(&key.k0, k, 8);
  std::memcpy(&key.k1, k + 8, 8);
  EXPECT_EQ((siphash<2, 4>(key, m, sizeof m)), 0xa129ca6149be45e5ULL);
}

TEST(Header, RoundTrip) {
  auto b = message(kKey, 100, kFlagPing);
  Header h;
  ASSERT_EQ(decode_header(b.data(), b.size(), kKey, &h), HeaderCheck::ok);
  EXPECT_EQ(h.seq, 42u);
  EXPECT_EQ(h.send_ns, -7);
  EXPECT_EQ(h.flags, kFlagPing);
  EXPECT_EQ(h.size, 100u);
}

TEST(Header, RejectsGarbage) {
  Header h;
  std::vector<uint8_t> zeros(64, 0);
  EXPECT_EQ(decode_header(zeros.data(), zeros.size(), kKey, &h), HeaderCheck::bad_magic);
  std::vector<uint8_t> text(64);
  std::memcpy(text.data(), "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 27);
  EXPECT_EQ(decode_header(text.data(), text.size(), kKey, &h), HeaderCheck::bad_magic);
  auto b = message(kKey, 64);
  EXPECT_EQ(decode_header(b.data(), 31, kKey, &h), HeaderCheck::too_short);
  EXPECT_EQ(decode_header(b.data(), 0, kKey, &h), HeaderCheck::too_short);
}

TEST(Header, RejectsOtherRunsAndBadFields) {
  Header h;
  auto b = message(kKey, 64);
  EXPECT_EQ(decode_header(b.data(), b.size(), key_of_run_id(10), &h), HeaderCheck::wrong_run);
  EXPECT_EQ(decode_header(b.data(), 63, kKey, &h), HeaderCheck::wrong_size);  // truncated
  b[4] = 99;                                                                  // version
  EXPECT_EQ(decode_header(b.data(), b.size(), kKey, &h), HeaderCheck::bad_version);
  b = message(kKey, 64, 0x80);
  EXPECT_EQ(decode_header(b.data(), b.size(), kKey, &h), HeaderCheck::bad_flags);
}

// What a local process that knows everything but the key sends: a valid
// header of the run (run id, size, magic, version) with another sequence
// number or stamp, or a copy of a real message with either changed.
TEST(Header, NothingButTheKeyMakesAMessageOfTheRun) {
  RunKey key;
  ASSERT_TRUE(parse_run_key("00112233445566778899aabbccddeeff", &key));
  Header h;
  const auto real = message(key, 64, 0, 7, 123456789);
  ASSERT_EQ(decode_header(real.data(), real.size(), key, &h), HeaderCheck::ok);
  EXPECT_EQ(decode_header(real.data(), real.size(), key_of_run_id(9), &h), HeaderCheck::wrong_run);
  for (size_t at : {16, 24, 12}) {  // seq, send_ns, size: each altered in a copy of a real message
    auto forged = real;
    forged[at] ^= 1;
    EXPECT_NE(decode_header(forged.data(), forged.size(), key, &h), HeaderCheck::ok) << at;
  }
  auto warm = real;
  warm[5] = kFlagWarmup;  // flags other than ping/pong are covered
  EXPECT_EQ(decode_header(warm.data(), warm.size(), key, &h), HeaderCheck::wrong_run);
  auto pong = real;
  pong[5] = kFlagPong;  // an echo turns a ping into a pong in place: still the run's
  EXPECT_EQ(decode_header(pong.data(), pong.size(), key, &h), HeaderCheck::ok);
  const auto other_key = message(key_of_run_id(9), 64, 0, 1000000000, 123456789);
  EXPECT_EQ(decode_header(other_key.data(), other_key.size(), key, &h), HeaderCheck::wrong_run);
}

TEST(Header, KeysParse) {
  RunKey key;
  EXPECT_TRUE(parse_run_key("0123456789abcdefFEDCBA9876543210", &key));
  EXPECT_EQ(key.k0, 0x0123456789abcdefULL);
  EXPECT_EQ(key.k1, 0xfedcba9876543210ULL);
  EXPECT_FALSE(parse_run_key("0123", &key));
  EXPECT_FALSE(parse_run_key("0123456789abcdefFEDCBA987654321g", &key));
}

TEST(Header, FuzzedBytesNeverPassAsTheRuns) {
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
    std::memcpy(b.data(), &kMagic, 4);  // past the cheap checks: only the tag stands in the way
    b[4] = kHeaderVersion;
    b[5] &= kKnownFlags;
    const uint32_t size = 48;
    std::memcpy(b.data() + 12, &size, 4);
    EXPECT_NE(decode_header(b.data(), b.size(), kKey, &h), HeaderCheck::ok);
  }
}
