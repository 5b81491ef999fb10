#include "core/payload.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/header.h"

namespace mwperf {
namespace {

constexpr const char* kFile = "file:";

bool is_file(const std::string& spec) { return spec.rfind(kFile, 0) == 0; }

}  // namespace

std::string Payload::check(const std::string& spec, size_t size) {
  if (spec == "pattern" || spec == "zeros" || spec == "random") return "";
  if (!is_file(spec)) return "must be pattern, zeros, random or file:PATH";
  const std::string path = spec.substr(std::strlen(kFile));
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return std::string("cannot be read: ") + std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return "is not a regular file";
  const size_t chunk = size > kHeaderSize ? size - kHeaderSize : 0;
  if (chunk == 0) return "needs a --size above the 32-byte header";
  if (size_t(st.st_size) < chunk)
    return "holds " + std::to_string(st.st_size) + " bytes, less than one sample's " + std::to_string(chunk);
  if (size_t(st.st_size) > kMaxPayloadFileBytes)
    return "holds " + std::to_string(st.st_size) + " bytes, more than the " + std::to_string(kMaxPayloadFileBytes) +
           " loaded at most";
  return "";
}

std::string Payload::load(const std::string& spec, size_t size) {
  if (std::string why = check(spec, size); !why.empty()) return why;
  size_ = size;
  const size_t chunk = size - std::min(size, kHeaderSize);
  if (!is_file(spec)) {
    n_ = 1;
    buf_.assign(size, 0);
    uint64_t x = 0x9E3779B97F4A7C15ULL;  // xorshift64: the same bytes in every agent
    for (size_t i = kHeaderSize; i < size; ++i) {
      if (spec == "pattern") {
        buf_[i] = uint8_t(i);
      } else if (spec == "random") {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        buf_[i] = uint8_t(x >> 32);
      }
    }
    return "";
  }
  const std::string path = spec.substr(std::strlen(kFile));
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return std::string("cannot be read: ") + std::strerror(errno);
  std::vector<uint8_t> data;
  uint8_t block[65536];
  for (size_t got; (got = std::fread(block, 1, sizeof block, f)) > 0;) data.insert(data.end(), block, block + got);
  std::fclose(f);
  n_ = data.size() / chunk;  // a tail shorter than a chunk is not sent
  if (n_ == 0)
    return "holds " + std::to_string(data.size()) + " bytes, less than one sample's " + std::to_string(chunk);
  buf_.assign(n_ * size, 0);
  for (size_t k = 0; k < n_; ++k) std::memcpy(&buf_[k * size + kHeaderSize], &data[k * chunk], chunk);
  return "";
}

bool Payload::matches(const uint8_t* msg, size_t len, uint64_t k) const {
  if (len != size_ || buf_.empty()) return false;
  const uint8_t* want = buf_.data() + (k % n_) * size_;
  return std::memcmp(msg + kHeaderSize, want + kHeaderSize, size_ - kHeaderSize) == 0;
}

}  // namespace mwperf
