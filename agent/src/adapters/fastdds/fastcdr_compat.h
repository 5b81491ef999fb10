// What the fastdds adapter's type support (fastdds.cpp) needs of Fast CDR,
// the same on Fast CDR 1 (Debian's, under Fast DDS 2.9: the fastdds adapter)
// and Fast CDR 2 (the ROS 2 Jazzy wheels', under Fast DDS 2.14: fastdds-jazzy).
// Both write the same bytes: the encapsulation CDR_LE / CDR_BE (plain CDR,
// XCDR version 1: what rmw_fastrtps_cpp and fastddsgen's XCDR1 code write),
// then the members, without parameter lists.
//
// Fast CDR 2 renamed the camel-case calls (serializeArray -> serialize_array,
// getSerializedDataLength -> get_serialized_data_length) and moved the CDR kind
// out of the Cdr class (Cdr::DDS_CDR -> CdrVersion XCDRv1 with the PLAIN_CDR
// encoding flag).
#pragma once

#include <fastcdr/Cdr.h>
#include <fastcdr/FastBuffer.h>
#include <fastcdr/config.h>

#include <cstddef>
#include <cstdint>

namespace mwperf {
namespace fastcdr_compat {

using eprosima::fastcdr::Cdr;
using eprosima::fastcdr::FastBuffer;

// A Cdr of the adapter's: `Cdr c(fb, Cdr::DEFAULT_ENDIAN, kCdrKind); plain(c);`
// (a Cdr can be neither copied nor moved, so no function makes one).
#if FASTCDR_VERSION_MAJOR >= 2
constexpr auto kCdrKind = eprosima::fastcdr::CdrVersion::XCDRv1;
inline void plain(Cdr& c) { c.set_encoding_flag(eprosima::fastcdr::EncodingAlgorithmFlag::PLAIN_CDR); }
inline void serialize_bytes(Cdr& c, const uint8_t* data, size_t n) { c.serialize_array(data, n); }
inline void deserialize_bytes(Cdr& c, uint8_t* data, size_t n) { c.deserialize_array(data, n); }
inline size_t serialized_length(const Cdr& c) { return c.get_serialized_data_length(); }
#else
constexpr auto kCdrKind = Cdr::DDS_CDR;
inline void plain(Cdr&) {}  // DDS_CDR: plain CDR, no parameter list, already
inline void serialize_bytes(Cdr& c, const uint8_t* data, size_t n) { c.serializeArray(data, n); }
inline void deserialize_bytes(Cdr& c, uint8_t* data, size_t n) { c.deserializeArray(data, n); }
inline size_t serialized_length(const Cdr& c) { return c.getSerializedDataLength(); }
#endif

}  // namespace fastcdr_compat
}  // namespace mwperf
