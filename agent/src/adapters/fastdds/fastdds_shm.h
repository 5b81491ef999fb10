// Fast DDS's shared-memory transport as mwperf sets it, the one setting of
// the three adapters on Fast DDS: fastdds (Debian's 2.9), fastdds-jazzy (the
// ROS 2 wheels' 2.14) and ros2 (rmw_fastrtps_cpp on that 2.14, through the XML
// profile it writes). They set the same explicit values, never a version's
// default (2.9 and 2.14 differ), so that the ROS overhead pair (ros2 over
// fastdds-jazzy) and fastdds next to them compare one transport configuration.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace mwperf {

// The largest message on the transport: one sample of `size` bytes with its
// RTPS headers (4 KiB is more than they take), never fragmented; at least 64 KiB.
inline uint32_t fastdds_shm_max_message_size(size_t size) { return uint32_t(std::max<size_t>(size + 4096, 64u << 10)); }

// Each participant's segment: four of the largest messages, at least Fast DDS's
// 512 KiB, at most 256 MiB.
inline uint32_t fastdds_shm_segment_size(size_t size) {
  return uint32_t(
      std::min<size_t>(std::max<size_t>(4 * size_t(fastdds_shm_max_message_size(size)), 512u << 10), 256u << 20));
}

}  // namespace mwperf
