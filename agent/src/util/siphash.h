// SipHash (Aumasson and Bernstein, "SipHash: a fast short-input PRF", 2012):
// a keyed 64-bit hash of a short message, written from the paper's
// description. C compression rounds per 8-byte word, D finalization rounds:
// SipHash-2-4 is the paper's, SipHash-1-3 the quicker variant the header tag
// uses. No allocation, no state beyond four words.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace mwperf {

struct SipKey {
  uint64_t k0 = 0, k1 = 0;
};

namespace siphash_detail {

inline uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

struct State {
  uint64_t v0, v1, v2, v3;
  void round() {
    v0 += v1;
    v1 = rotl(v1, 13);
    v1 ^= v0;
    v0 = rotl(v0, 32);
    v2 += v3;
    v3 = rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = rotl(v1, 17);
    v1 ^= v2;
    v2 = rotl(v2, 32);
  }
};

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "words are read as little-endian");

// Little-endian 64-bit word of 8 bytes, and of the last 0..7.
inline uint64_t word(const uint8_t* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}
inline uint64_t tail(const uint8_t* p, size_t n) {
  uint64_t w = 0;
  for (size_t i = 0; i < n; ++i) w |= uint64_t(p[i]) << (8 * i);
  return w;
}

}  // namespace siphash_detail

template <int C, int D>
uint64_t siphash(const SipKey& key, const uint8_t* data, size_t len) {
  siphash_detail::State s{key.k0 ^ 0x736f6d6570736575ULL, key.k1 ^ 0x646f72616e646f6dULL,
                          key.k0 ^ 0x6c7967656e657261ULL, key.k1 ^ 0x7465646279746573ULL};
  auto compress = [&s](uint64_t m) {
    s.v3 ^= m;
    for (int i = 0; i < C; ++i) s.round();
    s.v0 ^= m;
  };
  const size_t whole = len / 8 * 8;
  for (size_t i = 0; i < whole; i += 8) compress(siphash_detail::word(data + i));
  compress(siphash_detail::tail(data + whole, len - whole) | (uint64_t(len & 0xff) << 56));
  s.v2 ^= 0xff;
  for (int i = 0; i < D; ++i) s.round();
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

}  // namespace mwperf
