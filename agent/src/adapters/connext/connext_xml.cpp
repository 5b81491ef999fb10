#include "adapters/connext/connext_xml.h"

#include <algorithm>
#include <cstdint>

namespace mwperf {
namespace {

constexpr size_t kPoolLimit = 1u << 20;
constexpr size_t kCdrOverhead = 256;        // encapsulation, layout, lengths, key: far less, rounded up
constexpr int kShmReceiveBuffer = 2 << 20;  // as Perftest: 2 MiB of shared memory per receive port
constexpr int kUdpReceiveBuffer = 4 << 20;  // the machine's rmem_max; Cyclone asks the same

std::string element(const std::string& name, const std::string& value) {
  return "<element><name>" + name + "</name><value>" + value + "</value></element>";
}

std::string duration(int64_t ns) {
  return "<sec>" + std::to_string(ns / 1000000000) + "</sec><nanosec>" + std::to_string(ns % 1000000000) + "</nanosec>";
}

std::string unlimited_or(bool unlimited, int64_t n) { return unlimited ? "LENGTH_UNLIMITED" : std::to_string(n); }

// What writer and reader share: reliability, history, durability, resource
// limits, and the size of the buffers preallocated per sample. The reader's
// limits are as the history asks (keep-last N per instance, keep-all without
// a limit); the writer's have none, its history bounds it (a writer limited to
// N samples piggybacks a heartbeat on about every sample, which the reader
// answers: twice the datagrams; Perftest's writers have no limit either).
// Instances are hashed one per bucket, as Perftest does.
std::string endpoint_qos(const ConnextXml& x, const char* side) {
  const bool writer = std::string(side) == "data_writer";
  const int64_t per_instance = x.depth;
  std::string q = "<reliability><kind>";
  q += x.reliable ? "RELIABLE_RELIABILITY_QOS" : "BEST_EFFORT_RELIABILITY_QOS";
  q += "</kind><max_blocking_time>" + duration(100000000) + "</max_blocking_time></reliability>";
  q += "<history><kind>";
  q += x.keep_all ? "KEEP_ALL_HISTORY_QOS" : "KEEP_LAST_HISTORY_QOS";
  q += "</kind><depth>" + std::to_string(x.depth) + "</depth></history>";
  q += "<durability><kind>";
  q += x.transient_local ? "TRANSIENT_LOCAL_DURABILITY_QOS" : "VOLATILE_DURABILITY_QOS";
  q += "</kind></durability>";
  q += "<resource_limits><max_instances>" + std::to_string(x.instances) + "</max_instances>";
  q += "<initial_instances>" + std::to_string(std::min<uint32_t>(x.instances, 1024)) + "</initial_instances>";
  q += "<instance_hash_buckets>" + std::to_string(std::min<uint32_t>(x.instances, 1u << 16)) +
       "</instance_hash_buckets>";
  q += "<max_samples_per_instance>" + unlimited_or(writer || x.keep_all, per_instance) + "</max_samples_per_instance>";
  const int64_t samples = per_instance * x.instances;
  q += "<max_samples>" + unlimited_or(writer || x.keep_all || samples > INT32_MAX, samples) + "</max_samples>";
  q += "<initial_samples>" + std::to_string(x.keep_all ? 32 : std::min<int64_t>(samples, 32)) +
       "</initial_samples></resource_limits>";
  q += "<property><value>" +
       element(std::string("dds.") + side + ".history.memory_manager.fast_pool.pool_buffer_max_size",
               std::to_string(x.pool_buffer_max_size())) +
       "</value></property>";
  return q;
}

std::string participant_qos(const ConnextXml& x) {
  std::string mask = x.udp && x.shm ? "UDPv4|SHMEM" : x.udp ? "UDPv4" : "SHMEM";
  std::string q = "<participant_qos><transport_builtin><mask>" + mask + "</mask></transport_builtin>";
  // Announced at once (10 to 100 ms apart, not Connext's 1 s) and deleted
  // without its 1 s clean-up steps: a point starts and ends sooner.
  q += "<discovery_config><min_initial_participant_announcement_period>" + duration(10000000) +
       "</min_initial_participant_announcement_period><max_initial_participant_announcement_period>" +
       duration(100000000) + "</max_initial_participant_announcement_period></discovery_config>";
  q += "<database><shutdown_cleanup_period>" + duration(10000000) + "</shutdown_cleanup_period></database>";
  // Unicast discovery only: the peers below, no multicast address to listen on.
  q += "<discovery><initial_peers>";
  const std::string limit = std::to_string(x.peer_index_limit) + "@";
  if (x.udp) q += "<element>" + limit + "builtin.udpv4://" + x.peer + "</element>";
  if (x.shm) q += "<element>" + limit + "builtin.shmem://</element>";
  q += "</initial_peers><multicast_receive_addresses/></discovery><property><value>";
  if (x.udp) {
    if (!x.allow_ip.empty()) q += element("dds.transport.UDPv4.builtin.parent.allow_interfaces_list", x.allow_ip);
    q += element("dds.transport.UDPv4.builtin.multicast_enabled", "0");
    // A point's interface does not change; Connext's tracker of changes can
    // deadlock the participant's deletion when a namespace's veth comes up.
    q += element("dds.transport.UDPv4.builtin.disable_interface_tracking", "1");
    q += element("dds.transport.UDPv4.builtin.recv_socket_buffer_size", std::to_string(kUdpReceiveBuffer));
  }
  if (x.shm) {
    q += element("dds.transport.shmem.builtin.receive_buffer_size", std::to_string(kShmReceiveBuffer));
    q += element("dds.transport.shmem.builtin.received_message_count_max",
                 std::to_string(std::max<size_t>(64, kShmReceiveBuffer / std::max<size_t>(x.size, 1))));
  }
  return q + "</value></property></participant_qos>";
}

// As Perftest's latency profile: heartbeats every 10 ms (1 ms while more
// than 100 samples wait for acknowledgment, until 10 do), repairs and
// acknowledgments without delay.
std::string writer_qos(const ConnextXml& x) {
  std::string q = "<datawriter_qos>" + endpoint_qos(x, "data_writer");
  q += "<publish_mode><kind>";
  q += x.asynchronous ? "ASYNCHRONOUS_PUBLISH_MODE_QOS" : "SYNCHRONOUS_PUBLISH_MODE_QOS";
  q += "</kind></publish_mode><protocol><rtps_reliable_writer>";
  q += "<low_watermark>10</low_watermark><high_watermark>100</high_watermark>";
  q += "<heartbeat_period>" + duration(10000000) + "</heartbeat_period>";
  q += "<fast_heartbeat_period>" + duration(1000000) + "</fast_heartbeat_period>";
  q += "<late_joiner_heartbeat_period>" + duration(10000000) + "</late_joiner_heartbeat_period>";
  q += "<max_heartbeat_retries>LENGTH_UNLIMITED</max_heartbeat_retries>";
  q += "<min_nack_response_delay>" + duration(0) + "</min_nack_response_delay>";
  q += "<max_nack_response_delay>" + duration(0) + "</max_nack_response_delay>";
  q += "</rtps_reliable_writer></protocol>";
  if (x.batch)  // samples share a batch until it holds 30000 bytes or flush() (pings, echoes, rate mode)
    q += "<batch><enable>true</enable><max_data_bytes>30000</max_data_bytes><max_samples>LENGTH_UNLIMITED</max_samples>"
         "<max_flush_delay><sec>DURATION_INFINITE_SEC</sec><nanosec>DURATION_INFINITE_NSEC</nanosec></max_flush_delay>"
         "</batch>";
  return q + "</datawriter_qos>";
}

std::string reader_qos(const ConnextXml& x) {
  return "<datareader_qos>" + endpoint_qos(x, "data_reader") +
         "<protocol><rtps_reliable_reader><min_heartbeat_response_delay>" + duration(0) +
         "</min_heartbeat_response_delay><max_heartbeat_response_delay>" + duration(0) +
         "</max_heartbeat_response_delay></rtps_reliable_reader></protocol></datareader_qos>";
}

std::string member(const std::string& name, const std::string& attributes) {
  return "<member name=\"" + name + "\" " + attributes + "/>";
}

std::string types(bool keyed) {
  const std::string final_ = "extensibility=\"final\"";
  std::string t = "<types><module name=\"std_msgs\"><module name=\"msg\"><module name=\"dds_\">";
  t += "<struct name=\"MultiArrayDimension_\" " + final_ + ">" +
       member("label", "type=\"string\" stringMaxLength=\"-1\"") + member("size", "type=\"uint32\"") +
       member("stride", "type=\"uint32\"") + "</struct>";
  t += "<struct name=\"MultiArrayLayout_\" " + final_ + ">" +
       member("dim",
              "type=\"nonBasic\" nonBasicTypeName=\"std_msgs::msg::dds_::MultiArrayDimension_\" "
              "sequenceMaxLength=\"-1\"") +
       member("data_offset", "type=\"uint32\"") + "</struct>";
  const std::string layout =
      member("layout", "type=\"nonBasic\" nonBasicTypeName=\"std_msgs::msg::dds_::MultiArrayLayout_\"");
  const std::string data = member("data", "type=\"octet\" sequenceMaxLength=\"-1\"");
  t += "<struct name=\"UInt8MultiArray_\" " + final_ + ">" + layout + data + "</struct>";
  t += "</module></module></module>";
  if (keyed)
    t += "<module name=\"mwperf\"><module name=\"msg\"><module name=\"dds_\"><struct name=\"KeyedUInt8MultiArray_\" " +
         final_ + ">" + member("key", "type=\"uint32\" key=\"true\"") + layout + data +
         "</struct></module></module></module>";
  return t + "</types>";
}

}  // namespace

std::string ConnextXml::participant() const { return "mwperf_" + name + "::agent"; }

size_t ConnextXml::pool_buffer_max_size() const {
  return size + kCdrOverhead <= kPoolLimit ? size + kCdrOverhead : 4096;
}

std::string ConnextXml::xml() const {
  const std::string qos = "mwperf_qos_" + name, domains = "mwperf_domains_" + name, type = type_name();
  std::string s = "<?xml version=\"1.0\"?>\n<dds>";
  s += "<qos_library name=\"" + qos + "\"><qos_profile name=\"point\">" + participant_qos(*this) + writer_qos(*this) +
       reader_qos(*this) + "</qos_profile></qos_library>";
  s += types(keyed);
  s += "<domain_library name=\"" + domains + "\"><domain name=\"point\" domain_id=\"" + std::to_string(domain) + "\">";
  s += "<register_type name=\"" + type + "\" type_ref=\"" + type + "\"/>";
  s += "<topic name=\"" + topic_out + "\" register_type_ref=\"" + type + "\"/>";
  s += "<topic name=\"" + topic_in + "\" register_type_ref=\"" + type + "\"/></domain></domain_library>";
  const std::string base = "base_name=\"" + qos + "::point\"";
  s += "<domain_participant_library name=\"mwperf_" + name + "\"><domain_participant name=\"agent\" domain_ref=\"" +
       domains + "::point\"><participant_qos " + base + "/>";
  s += "<publisher name=\"out\"><data_writer name=\"writer\" topic_ref=\"" + topic_out + "\"><datawriter_qos " + base +
       "/></data_writer></publisher>";
  s += "<subscriber name=\"in\"><data_reader name=\"reader\" topic_ref=\"" + topic_in + "\"><datareader_qos " + base +
       "/></data_reader></subscriber>";
  return s + "</domain_participant></domain_participant_library></dds>\n";
}

}  // namespace mwperf
