// What the fastdds adapter (fastdds.cpp) needs of Fast DDS, the same on Fast
// DDS 2 (Debian's 2.9: fastdds; the ROS 2 Jazzy wheels' 2.14: fastdds-jazzy)
// and Fast DDS 3 (the ROS 2 Kilted wheels' 3.2: fastdds3). Fast CDR's
// differences are fastcdr_compat.h's.
//
// Fast DDS 3 moved what was eprosima::fastrtps into eprosima::fastdds (rtps::
// Locator_t, IPLocator, SerializedPayload_t, InstanceHandle_t; dds::Duration_t),
// renamed its headers (.h -> .hpp, fastrtps/config.h -> fastdds/config.hpp,
// libfastrtps -> libfastdds), made ReturnCode_t a plain int32_t with dds::RETCODE_*
// constants, and renamed TopicDataType's members (serialize takes references and
// the data representation, getSerializedSizeProvider -> calculate_serialized_size,
// createData -> create_data, getKey -> two compute_key, setName -> set_name,
// m_typeSize -> max_serialized_type_size, m_isGetKeyDefined -> is_compute_key_provided).
#pragma once

#if __has_include(<fastdds/config.hpp>)
#include <fastdds/config.hpp>
#define MWPERF_FASTDDS_MAJOR 3
#else
#include <fastrtps/config.h>
#define MWPERF_FASTDDS_MAJOR 2
#endif

namespace mwperf {
namespace fastdds_compat {
// The library's file name (loaded_libs.h's stem) and the headers' version.
#if MWPERF_FASTDDS_MAJOR >= 3
constexpr const char* kLibrary = "libfastdds.so";
constexpr const char* kBuiltVersion = FASTDDS_VERSION_STR;
// What its shared-memory transport and data sharing leave in /dev/shm (3.x: fastdds_*, 2.x: fastrtps_*).
#define MWPERF_FASTDDS_SHM_LEFTOVERS "/dev/shm/fastdds_*,/dev/shm/fast_datasharing_*,/dev/shm/sem.fastdds_*"
#else
constexpr const char* kLibrary = "libfastrtps.so";
constexpr const char* kBuiltVersion = FASTRTPS_VERSION_STR;
#define MWPERF_FASTDDS_SHM_LEFTOVERS "/dev/shm/fastrtps_*,/dev/shm/fast_datasharing_*,/dev/shm/sem.fastrtps_*"
#endif
}  // namespace fastdds_compat
}  // namespace mwperf

// Those alone where no more of Fast DDS is linked (ros2: its rmw's Fast DDS).
#ifndef MWPERF_FASTDDS_COMPAT_VERSION_ONLY
#if MWPERF_FASTDDS_MAJOR >= 3
#include <fastdds/dds/core/ReturnCode.hpp>
#include <fastdds/dds/core/Time_t.hpp>
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.hpp>
#include <fastdds/rtps/transport/shared_mem/SharedMemTransportDescriptor.hpp>
#include <fastdds/utils/IPLocator.hpp>
#else
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>
#include <fastdds/rtps/transport/shared_mem/SharedMemTransportDescriptor.h>
#include <fastrtps/types/TypesBase.h>
#include <fastrtps/utils/IPLocator.h>
#endif
#include <fastdds/dds/publisher/qos/DataWriterQos.hpp>
#include <fastdds/dds/topic/TopicDataType.hpp>

#include <cstdint>
#include <functional>
#include <string>

namespace mwperf {
namespace fastdds_compat {

namespace dds = eprosima::fastdds::dds;

#if MWPERF_FASTDDS_MAJOR >= 3
namespace rtps = eprosima::fastdds::rtps;
using Duration_t = dds::Duration_t;
using ReturnCode_t = dds::ReturnCode_t;
inline const Duration_t& time_infinite() { return dds::c_TimeInfinite; }
constexpr ReturnCode_t kOk = dds::RETCODE_OK, kNoData = dds::RETCODE_NO_DATA, kTimeout = dds::RETCODE_TIMEOUT;
inline int code(ReturnCode_t rc) { return rc; }
#else
namespace rtps = eprosima::fastrtps::rtps;
using Duration_t = eprosima::fastrtps::Duration_t;
using ReturnCode_t = eprosima::fastrtps::types::ReturnCode_t;
inline const Duration_t& time_infinite() { return eprosima::fastrtps::c_TimeInfinite; }
const ReturnCode_t kOk = ReturnCode_t::RETCODE_OK, kNoData = ReturnCode_t::RETCODE_NO_DATA,
                   kTimeout = ReturnCode_t::RETCODE_TIMEOUT;
inline int code(const ReturnCode_t& rc) { return int(rc()); }
#endif

// The heartbeat period of a reliable writer, in ms (WriterTimes::heartbeat_period, 2.x's heartbeatPeriod).
inline int64_t heartbeat_ms(const dds::DataWriterQos& q) {
#if MWPERF_FASTDDS_MAJOR >= 3
  const auto& t = q.reliable_writer_qos().times.heartbeat_period;
#else
  const auto& t = q.reliable_writer_qos().times.heartbeatPeriod;
#endif
  return int64_t(t.seconds) * 1000 + int64_t(t.nanosec / 1000000);
}

// A TopicDataType whose members are T's, named the same on Fast DDS 2 and 3:
//   bool to_payload(const void* data, rtps::SerializedPayload_t&);
//   bool from_payload(rtps::SerializedPayload_t&, void* data);
//   uint32_t size_of(const void* data);  void* make();  void drop(void* data);
//   bool key_of(const void* data, rtps::InstanceHandle_t&);
//   bool key_of_payload(rtps::SerializedPayload_t&, rtps::InstanceHandle_t&);
// (static dispatch: no call more than Fast DDS's own virtual one).
template <class T>
class TypeSupport : public dds::TopicDataType {
 protected:
  void describe(const std::string& name, uint32_t max_size, bool keyed) {
#if MWPERF_FASTDDS_MAJOR >= 3
    set_name(name);
    max_serialized_type_size = max_size;
    is_compute_key_provided = keyed;
#else
    setName(name.c_str());
    m_typeSize = max_size;
    m_isGetKeyDefined = keyed;
#endif
  }

 private:
  T& self() { return static_cast<T&>(*this); }

 public:
#if MWPERF_FASTDDS_MAJOR >= 3
  bool serialize(const void* const data, rtps::SerializedPayload_t& p, dds::DataRepresentationId_t) override {
    return self().to_payload(data, p);
  }
  bool deserialize(rtps::SerializedPayload_t& p, void* data) override { return self().from_payload(p, data); }
  uint32_t calculate_serialized_size(const void* const data, dds::DataRepresentationId_t) override {
    return self().size_of(data);
  }
  void* create_data() override { return self().make(); }
  void delete_data(void* data) override { self().drop(data); }
  bool compute_key(rtps::SerializedPayload_t& p, rtps::InstanceHandle_t& h, bool) override {
    return self().key_of_payload(p, h);
  }
  bool compute_key(const void* const data, rtps::InstanceHandle_t& h, bool) override { return self().key_of(data, h); }
#else
  bool serialize(void* data, rtps::SerializedPayload_t* p) override { return self().to_payload(data, *p); }
  bool deserialize(rtps::SerializedPayload_t* p, void* data) override { return self().from_payload(*p, data); }
  std::function<uint32_t()> getSerializedSizeProvider(void* data) override {
    return [this, data]() { return self().size_of(data); };
  }
  void* createData() override { return self().make(); }
  void deleteData(void* data) override { self().drop(data); }
  bool getKey(void* data, rtps::InstanceHandle_t* h, bool) override { return self().key_of(data, *h); }
#endif
};

}  // namespace fastdds_compat
}  // namespace mwperf
#endif  // MWPERF_FASTDDS_COMPAT_VERSION_ONLY
