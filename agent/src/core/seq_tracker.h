// Loss accounting from sequence numbers.
//
// Sequence numbers are 64-bit and compared with serial-number arithmetic
// (RFC 1982 style: the signed difference), so a run that starts near
// UINT64_MAX wraps through 0 correctly. A bitmap of the last `window` sequence
// numbers tells a late (out-of-order) arrival from a duplicate; a sample older
// than the window is counted as out of order. on_seq() never allocates.
#pragma once
#include <cstdint>
#include <vector>

namespace mwperf {

class SeqTracker {
 public:
  explicit SeqTracker(uint64_t first_seq, uint32_t window = 1u << 16);
  // What a sequence number is: a sample not seen before (in order or late), one
  // seen already, or one older than the window (cannot be told: counted as
  // out of order, never as a measurement), or one from before the run's first.
  enum class Verdict { fresh, duplicate, too_old, before_first };
  Verdict on_seq(uint64_t seq);

  uint64_t unique() const { return unique_; }              // distinct samples received
  uint64_t duplicates() const { return duplicates_; }      // same sequence number again
  uint64_t out_of_order() const { return out_of_order_; }  // arrived after a later one
  uint64_t missing() const { return missing_; }            // gaps not (yet) filled
  // Lost samples: sent - unique when the publisher's count is known (sent >= 0),
  // otherwise the gaps seen so far (a loss at the very end is invisible then).
  uint64_t lost(int64_t sent) const;

 private:
  bool test(uint64_t seq) const { return bits_[(seq % window_) / 64] >> (seq % 64) & 1; }
  void set(uint64_t seq) { bits_[(seq % window_) / 64] |= uint64_t(1) << (seq % 64); }
  void clear(uint64_t seq) { bits_[(seq % window_) / 64] &= ~(uint64_t(1) << (seq % 64)); }

  uint64_t first_;
  uint64_t highest_;
  uint32_t window_;
  std::vector<uint64_t> bits_;
  uint64_t unique_ = 0, duplicates_ = 0, out_of_order_ = 0, missing_ = 0;
};

}  // namespace mwperf
