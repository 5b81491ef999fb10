#include "core/seq_tracker.h"

namespace mwperf {

SeqTracker::SeqTracker(uint64_t first_seq, uint32_t window)
    : first_(first_seq), highest_(first_seq - 1), window_(window), bits_((window + 63) / 64, 0) {
  // window must be a multiple of 64 so that seq % window and seq % 64 agree.
  if (window_ % 64 != 0 || window_ == 0) {
    window_ = 1u << 16;
    bits_.assign(window_ / 64, 0);
  }
}

SeqTracker::Verdict SeqTracker::on_seq(uint64_t seq) {
  if (int64_t(seq - first_) < 0) return Verdict::before_first;  // not of this run: the caller counts it

  const int64_t d = int64_t(seq - highest_);
  if (d > 0) {
    const uint64_t gap = uint64_t(d) - 1;
    missing_ += gap;
    if (uint64_t(d) >= window_) {
      bits_.assign(bits_.size(), 0);
    } else {
      for (uint64_t s = highest_ + 1; s != seq; ++s) clear(s);
    }
    set(seq);
    highest_ = seq;
    ++unique_;
    return Verdict::fresh;
  }
  const uint64_t age = uint64_t(-d);
  if (age >= window_) {  // too old to tell: assume it fills a gap
    ++out_of_order_;
    if (missing_ > 0) {
      --missing_;
      ++unique_;
    } else {
      ++duplicates_;
    }
    return Verdict::too_old;
  }
  if (test(seq)) {
    ++duplicates_;
    return Verdict::duplicate;
  }
  set(seq);
  ++unique_;
  ++out_of_order_;
  if (missing_ > 0) --missing_;
  return Verdict::fresh;
}

uint64_t SeqTracker::lost(int64_t sent) const {
  if (sent < 0) return missing_;
  return uint64_t(sent) > unique_ ? uint64_t(sent) - unique_ : 0;
}

}  // namespace mwperf
