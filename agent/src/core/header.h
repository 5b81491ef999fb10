// The 32-byte header the core puts at the start of every message. Adapters never
// look inside it: they move opaque bytes.
#pragma once
#include <cstddef>
#include <cstdint>

namespace mwperf {

constexpr uint32_t kMagic = 0x4650574DU;  // "MWPF" little-endian
constexpr uint8_t kHeaderVersion = 1;
constexpr size_t kHeaderSize = 32;

enum Flags : uint8_t {
  kFlagWarmup = 1,  // not counted in any statistic
  kFlagPing = 2,    // the subscriber must echo this sample
  kFlagPong = 4,    // an echo, travelling subscriber -> publisher
  kFlagBurstFirst = 8,   // burst mode: the first sample of a burst
  kFlagBurstLast = 16,   // ... and the last
};
constexpr uint8_t kKnownFlags = kFlagWarmup | kFlagPing | kFlagPong | kFlagBurstFirst | kFlagBurstLast;

struct Header {
  uint32_t magic;
  uint8_t version;
  uint8_t flags;
  uint16_t reserved;
  uint32_t run_id;
  uint32_t size;     // total message size in bytes, header included
  uint64_t seq;
  int64_t send_ns;   // publisher's (intended) send time, CLOCK_MONOTONIC
};
static_assert(sizeof(Header) == kHeaderSize, "header layout");

// Writes h into buf (which must hold at least kHeaderSize bytes).
void encode_header(const Header& h, uint8_t* buf);

enum class HeaderCheck { ok, too_short, bad_magic, bad_version, bad_flags, wrong_run, wrong_size };

// Parses buf[0..len) and checks it belongs to this run: magic, version, known
// flags, run id and that the declared size equals the received length.
HeaderCheck decode_header(const uint8_t* buf, size_t len, uint32_t run_id, Header* out);

const char* to_string(HeaderCheck c);

}  // namespace mwperf
