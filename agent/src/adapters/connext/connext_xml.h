// The XML application file of one connext endpoint pair (one agent's side of a
// point): Connext's own QoS profile (transports, discovery peers, reliability,
// history, durability, resource limits, publish mode, batching), the payload
// type and the entities the Connector creates from it. Written per point; the
// record keeps it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace mwperf {

// ROS 2's std_msgs/msg/UInt8MultiArray as DDS names it (rmw_connextdds and
// rmw_fastrtps alike): layout (dim: sequence of {label, size, stride},
// data_offset), then data: sequence<octet>, which carries mwperf's message.
constexpr const char* kConnextType = "std_msgs::msg::dds_::UInt8MultiArray_";
// Keyed points: a key first, then the same members (ROS 2 has no keys).
constexpr const char* kConnextKeyedType = "mwperf::msg::dds_::KeyedUInt8MultiArray_";
// Entities of the file, as the Connector names them.
constexpr const char* kConnextWriter = "out::writer";
constexpr const char* kConnextReader = "in::reader";

// Every choice the file makes, resolved (no defaults left).
struct ConnextXml {
  std::string name;  // unique per adapter instance: "<pid>_<n>" (its libraries' suffix)
  uint32_t domain = 0;
  std::string topic_out, topic_in;
  bool keyed = false;
  uint32_t instances = 1;
  bool udp = true, shm = true;     // builtin transports
  std::string allow_ip;            // the UDPv4 interface allowed: 127.0.0.1, or the link's address
  std::string peer = "127.0.0.1";  // the UDPv4 discovery peer
  int peer_index_limit =
      100;  // participant indices the peers are asked at (Connext allows 0..119; a point has up to 65)
  bool reliable = true;
  bool keep_all = false;
  int depth = 10;
  bool transient_local = false;
  bool asynchronous = false;  // publish mode
  bool batch = false;
  size_t size = 0;  // the point's message size

  // The configuration name RTI_Connector_new takes ("library::participant").
  std::string participant() const;
  std::string type_name() const { return keyed ? kConnextKeyedType : kConnextType; }
  // Bytes of a serialized buffer Connext preallocates per sample (larger
  // samples are allocated as they come): the message and its CDR, up to 1 MiB.
  size_t pool_buffer_max_size() const;
  std::string xml() const;
};

// Connext 6.1 fragments a reliable sample only from its asynchronous
// publisher (a synchronous write of a larger one is dropped): above this
// size a reliable writer publishes asynchronously (Perftest's threshold).
constexpr size_t kConnextMaxSynchronousSize = 63000;

}  // namespace mwperf
