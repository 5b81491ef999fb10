// What the body of every message (the bytes after the 32-byte header) holds,
// --payload: `pattern` (byte i = i mod 256, the default), `zeros`, `random`
// (one incompressible block from a fixed seed), or `file:PATH` cut into
// (size - 32)-byte chunks, sample k carrying chunk k mod n (as Perftest's
// -loadDataFromFile): compressible and incompressible payloads differ where a
// middleware compresses. Every chunk is a whole message buffer, filled before
// the run: sending sample k copies nothing.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mwperf {

// At most this much of a file is loaded (its chunks are held in memory).
constexpr size_t kMaxPayloadFileBytes = size_t(1) << 30;

class Payload {
 public:
  // "" when `spec` can make messages of `size` bytes, else why not (an
  // unknown kind, a file that cannot be read, is shorter than one chunk or
  // longer than kMaxPayloadFileBytes).
  static std::string check(const std::string& spec, size_t size);
  // Fills the chunks; "" or why not.
  std::string load(const std::string& spec, size_t size);

  size_t chunks() const { return n_; }
  // The whole message buffer of sample k (its first 32 bytes are the header's).
  uint8_t* message(uint64_t k) { return buf_.data() + (k % n_) * size_; }
  // The body of msg[0..len) is chunk k's.
  bool matches(const uint8_t* msg, size_t len, uint64_t k) const;
  size_t memory_bytes() const { return buf_.size(); }

 private:
  size_t size_ = 0, n_ = 1;
  std::vector<uint8_t> buf_;
};

}  // namespace mwperf
