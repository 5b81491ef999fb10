// The 32-byte header the core puts at the start of every message. Adapters never
// look inside it: they move opaque bytes.
//
// A message belongs to the run when its 48-bit tag is the keyed hash
// (SipHash-1-3) of its sequence number, send stamp, size and flags under the
// run's key. The key reaches each agent over its control channel (stdin,
// `--key stdin`), never on its command line or in its environment, so a
// local process that reads both cannot make a message the run accepts (nor
// alter a sequence number or a stamp of one it saw). The ping/pong bits are
// left out of the tag: an echo turns a ping into a pong in place.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "util/siphash.h"

namespace mwperf {

constexpr uint32_t kMagic = 0x4650574DU;  // "MWPF" little-endian
constexpr uint8_t kHeaderVersion = 2;
constexpr size_t kHeaderSize = 32;
constexpr size_t kTagBytes = 6;

enum Flags : uint8_t {
  kFlagWarmup = 1,      // not counted in any statistic
  kFlagPing = 2,        // the subscriber must echo this sample
  kFlagPong = 4,        // an echo, travelling subscriber -> publisher
  kFlagBurstFirst = 8,  // burst mode: the first sample of a burst
  kFlagBurstLast = 16,  // ... and the last
};
constexpr uint8_t kKnownFlags = kFlagWarmup | kFlagPing | kFlagPong | kFlagBurstFirst | kFlagBurstLast;

struct Header {
  uint32_t magic;
  uint8_t version;
  uint8_t flags;
  uint8_t tag[kTagBytes];  // written by encode_header
  uint32_t size;           // total message size in bytes, header included
  uint64_t seq;
  int64_t send_ns;  // publisher's (intended) send time, CLOCK_MONOTONIC
};
static_assert(sizeof(Header) == kHeaderSize, "header layout");

// The run's key: 128 bits handed over the control channel, or (an agent run
// by hand, the agent's own tests) derived from the run id.
using RunKey = SipKey;
RunKey key_of_run_id(uint32_t run_id);
// "32 hexadecimal digits" -> key; false when the text is not that.
bool parse_run_key(const std::string& hex, RunKey* out);

// Writes h into buf (which must hold at least kHeaderSize bytes), its tag under key.
void encode_header(const Header& h, const RunKey& key, uint8_t* buf);

enum class HeaderCheck { ok, too_short, bad_magic, bad_version, bad_flags, wrong_run, wrong_size };

// Parses buf[0..len) and checks it belongs to this run: magic, version, known
// flags, the declared size equals the received length, and the tag is the
// run key's.
HeaderCheck decode_header(const uint8_t* buf, size_t len, const RunKey& key, Header* out);

const char* to_string(HeaderCheck c);

}  // namespace mwperf
