#include "core/header.h"

#include <cstring>

namespace mwperf {

void encode_header(const Header& h, uint8_t* buf) { std::memcpy(buf, &h, sizeof h); }

HeaderCheck decode_header(const uint8_t* buf, size_t len, uint32_t run_id, Header* out) {
  if (len < kHeaderSize) return HeaderCheck::too_short;
  std::memcpy(out, buf, sizeof *out);
  if (out->magic != kMagic) return HeaderCheck::bad_magic;
  if (out->version != kHeaderVersion) return HeaderCheck::bad_version;
  if ((out->flags & ~kKnownFlags) != 0) return HeaderCheck::bad_flags;
  if (out->run_id != run_id) return HeaderCheck::wrong_run;
  if (out->size != len) return HeaderCheck::wrong_size;
  return HeaderCheck::ok;
}

const char* to_string(HeaderCheck c) {
  switch (c) {
    case HeaderCheck::ok: return "ok";
    case HeaderCheck::too_short: return "too short";
    case HeaderCheck::bad_magic: return "bad magic";
    case HeaderCheck::bad_version: return "bad version";
    case HeaderCheck::bad_flags: return "unknown flags";
    case HeaderCheck::wrong_run: return "other run";
    case HeaderCheck::wrong_size: return "size mismatch";
  }
  return "?";
}

}  // namespace mwperf
