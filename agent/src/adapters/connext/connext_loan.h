// Samples of a connext reader taken on loan (DDS_DynamicDataReader_take) and
// handed out one at a time; the loan goes back before the next take.
#pragma once
#include <cstdint>
#include <cstring>

#include "adapters/connext/connext_c.h"

namespace mwperf {

constexpr int32_t kTakeMax = 64;   // samples per loan
constexpr size_t kSeqBytes = 256;  // storage for one sequence structure (Connext 6.1.2 fills 68)

class Loan {
 public:
  bool init() {
    std::memset(data_, 0xa5, sizeof data_);
    std::memset(info_, 0xa5, sizeof info_);
    DDS_DynamicDataSeq_initialize(data_);
    DDS_SampleInfoSeq_initialize(info_);
    // The sequences are Connext's structures in storage of ours: it must be large enough.
    auto untouched = [](const unsigned char* s) { return s[kSeqBytes / 2] == 0xa5 && s[kSeqBytes - 1] == 0xa5; };
    return inited_ = untouched(data_) && untouched(info_);
  }
  void finalize(void* reader) {
    give_back(reader);
    if (inited_) {
      DDS_DynamicDataSeq_finalize(data_);
      DDS_SampleInfoSeq_finalize(info_);
      inited_ = false;
    }
  }
  // Returns what is on loan, then takes up to kTakeMax samples.
  DDS_ReturnCode_t take(void* reader) {
    give_back(reader);
    const DDS_ReturnCode_t rc =
        DDS_DynamicDataReader_take(reader, data_, info_, kTakeMax, DDS_ANY_STATE, DDS_ANY_STATE, DDS_ANY_STATE);
    if (rc == DDS_RETCODE_OK) {
      loaned_ = true;
      n_ = DDS_DynamicDataSeq_get_length(data_);
      next_ = 0;
    }
    return rc;
  }
  bool full() const { return n_ == kTakeMax; }
  // The next sample with data (not a dispose or unregister notice), or nullptr.
  void* next() {
    while (next_ < n_) {
      const int32_t i = next_++;
      if (DDS_SampleInfoSeq_get_reference(info_, i)->valid_data) return DDS_DynamicDataSeq_get_reference(data_, i);
    }
    return nullptr;
  }
  void give_back(void* reader) {
    if (loaned_) DDS_DynamicDataReader_return_loan(reader, data_, info_);
    loaned_ = false;
    n_ = next_ = 0;
  }

 private:
  alignas(16) unsigned char data_[kSeqBytes];
  alignas(16) unsigned char info_[kSeqBytes];
  bool inited_ = false, loaned_ = false;
  int32_t n_ = 0, next_ = 0;
};

}  // namespace mwperf
