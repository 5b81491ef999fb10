#include "core/header.h"

#include <cstring>

namespace mwperf {
namespace {

// The tag: SipHash-1-3 over seq, send_ns, size and the flags but ping/pong,
// 48 bits of it (a forger's chance is 2^-48 a message).
void tag_of(const Header& h, const RunKey& key, uint8_t out[kTagBytes]) {
  uint8_t m[21];
  std::memcpy(m, &h.seq, 8);
  std::memcpy(m + 8, &h.send_ns, 8);
  std::memcpy(m + 16, &h.size, 4);
  m[20] = uint8_t(h.flags & ~(kFlagPing | kFlagPong));
  const uint64_t t = siphash<1, 3>(key, m, sizeof m);
  std::memcpy(out, &t, kTagBytes);
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

RunKey key_of_run_id(uint32_t run_id) { return RunKey{run_id, 0x6d77706572662d6bULL}; }

bool parse_run_key(const std::string& hex, RunKey* out) {
  if (hex.size() != 32) return false;
  uint64_t w[2] = {0, 0};
  for (size_t i = 0; i < 32; ++i) {
    const int d = hex_digit(hex[i]);
    if (d < 0) return false;
    w[i / 16] = w[i / 16] << 4 | uint64_t(d);
  }
  *out = RunKey{w[0], w[1]};
  return true;
}

void encode_header(const Header& h, const RunKey& key, uint8_t* buf) {
  Header tagged = h;
  tag_of(h, key, tagged.tag);
  std::memcpy(buf, &tagged, sizeof tagged);
}

HeaderCheck decode_header(const uint8_t* buf, size_t len, const RunKey& key, Header* out) {
  if (len < kHeaderSize) return HeaderCheck::too_short;
  std::memcpy(out, buf, sizeof *out);
  if (out->magic != kMagic) return HeaderCheck::bad_magic;
  if (out->version != kHeaderVersion) return HeaderCheck::bad_version;
  if ((out->flags & ~kKnownFlags) != 0) return HeaderCheck::bad_flags;
  if (out->size != len) return HeaderCheck::wrong_size;
  uint8_t want[kTagBytes];
  tag_of(*out, key, want);
  if (std::memcmp(want, out->tag, kTagBytes) != 0) return HeaderCheck::wrong_run;
  return HeaderCheck::ok;
}

const char* to_string(HeaderCheck c) {
  switch (c) {
    case HeaderCheck::ok:
      return "ok";
    case HeaderCheck::too_short:
      return "too short";
    case HeaderCheck::bad_magic:
      return "bad magic";
    case HeaderCheck::bad_version:
      return "bad version";
    case HeaderCheck::bad_flags:
      return "unknown flags";
    case HeaderCheck::wrong_run:
      return "not this run's (tag)";
    case HeaderCheck::wrong_size:
      return "size mismatch";
  }
  return "?";
}

}  // namespace mwperf
