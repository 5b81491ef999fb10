// The fastdds adapter's type support (fastdds.cpp, built as fastdds, fastdds-jazzy
// and fastdds3): ../cyclonedds/mwperf.idl's UInt8MultiArray_ / KeyedUInt8MultiArray_
// serialized by a TopicDataType of ours, the same on Fast DDS 2 and 3
// (fastdds_compat.h) and Fast CDR 1 and 2 (fastcdr_compat.h).
#pragma once

#include <fastcdr/exceptions/NotEnoughMemoryException.h>

#include <cstdint>
#include <string>
#include <vector>

#include "adapters/fastdds/fastcdr_compat.h"
#include "adapters/fastdds/fastdds_compat.h"

namespace mwperf {
namespace fastdds_type {

using fastcdr_compat::Cdr;
using fastcdr_compat::FastBuffer;
using fastcdr_compat::kCdrKind;
namespace rtps = fastdds_compat::rtps;

// One message as UInt8MultiArray_ / KeyedUInt8MultiArray_ (../cyclonedds/mwperf.idl): the same
// CDR as fastddsgen's code writes, serialized straight from the core's buffer
// (as Cyclone does from the sample that points at it), deserialized into a
// buffer reserved at open.
struct RawSample {
  const uint8_t* out = nullptr;
  size_t out_len = 0;
  uint32_t key = 0;
  std::vector<uint8_t> in;
};

class RawType final : public fastdds_compat::TypeSupport<RawType> {
  static constexpr uint32_t kHead = 4 + 12;  // the key (keyed points), dims, data_offset, length

 public:
  RawType(bool keyed, size_t size) : keyed_(keyed), size_(size) {
    // encapsulation, key/dims/data_offset/length, payload, padding
    describe(keyed ? "mwperf::msg::dds_::KeyedUInt8MultiArray_" : "std_msgs::msg::dds_::UInt8MultiArray_",
             uint32_t(4 + kHead + size + 8), keyed);
  }
  bool to_payload(const void* data, rtps::SerializedPayload_t& payload) {
    const auto* s = static_cast<const RawSample*>(data);
    FastBuffer fb(reinterpret_cast<char*>(payload.data), payload.max_size);
    Cdr ser(fb, Cdr::DEFAULT_ENDIAN, kCdrKind);
    fastcdr_compat::plain(ser);
    payload.encapsulation = ser.endianness() == Cdr::BIG_ENDIANNESS ? CDR_BE : CDR_LE;
    try {
      ser.serialize_encapsulation();
      if (keyed_) ser << s->key;
      ser << uint32_t(0) << uint32_t(0) << uint32_t(s->out_len);  // no dimensions, data_offset 0, the length
      fastcdr_compat::serialize_bytes(ser, s->out, s->out_len);
    } catch (eprosima::fastcdr::exception::NotEnoughMemoryException&) {
      return false;
    }
    payload.length = uint32_t(fastcdr_compat::serialized_length(ser));
    return true;
  }
  bool from_payload(rtps::SerializedPayload_t& payload, void* data) {
    auto* s = static_cast<RawSample*>(data);
    FastBuffer fb(reinterpret_cast<char*>(payload.data), payload.length);
    Cdr deser(fb, Cdr::DEFAULT_ENDIAN, kCdrKind);
    try {
      deser.read_encapsulation();
      if (keyed_) deser >> s->key;
      uint32_t dims, n;
      deser >> dims;
      if (dims > payload.length) return false;
      for (uint32_t i = 0; i < dims; ++i) {  // another vendor's layout: read past it
        std::string label;
        uint32_t size, stride;
        deser >> label >> size >> stride;
      }
      deser >> n >> n;  // data_offset, then the data's length
      if (n > payload.length) return false;
      s->in.resize(n);  // within the capacity reserved for the point's size: no allocation
      fastcdr_compat::deserialize_bytes(deser, s->in.data(), n);
    } catch (eprosima::fastcdr::exception::NotEnoughMemoryException&) {
      return false;
    }
    return true;
  }
  uint32_t size_of(const void* data) { return uint32_t(4 + kHead + static_cast<const RawSample*>(data)->out_len); }
  void* make() {
    auto* s = new RawSample();
    s->in.reserve(size_);
    return s;
  }
  void drop(void* data) { delete static_cast<RawSample*>(data); }
  bool key_of(const void* data, rtps::InstanceHandle_t& handle) {
    return keyed_ && key_handle(static_cast<const RawSample*>(data)->key, handle);
  }
  // The key straight from a sample's CDR (after the encapsulation's 4 bytes, in its byte order).
  bool key_of_payload(rtps::SerializedPayload_t& payload, rtps::InstanceHandle_t& handle) {
    if (!keyed_ || payload.length < 8) return false;
    const uint8_t* k = payload.data + 4;
    const bool little = (payload.data[1] & 1) != 0;
    const uint32_t key = little ? uint32_t(k[0]) | uint32_t(k[1]) << 8 | uint32_t(k[2]) << 16 | uint32_t(k[3]) << 24
                                : uint32_t(k[3]) | uint32_t(k[2]) << 8 | uint32_t(k[1]) << 16 | uint32_t(k[0]) << 24;
    return key_handle(key, handle);
  }

 private:
  static bool key_handle(uint32_t k, rtps::InstanceHandle_t& handle) {  // the key as CDR big endian, zero padded
    for (int i = 0; i < 16; ++i) handle.value[i] = 0;
    handle.value[0] = uint8_t(k >> 24);
    handle.value[1] = uint8_t(k >> 16);
    handle.value[2] = uint8_t(k >> 8);
    handle.value[3] = uint8_t(k);
    return true;
  }
  bool keyed_;
  size_t size_;
};

}  // namespace fastdds_type
}  // namespace mwperf
