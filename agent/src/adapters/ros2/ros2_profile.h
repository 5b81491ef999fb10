// The Fast DDS XML profile that confines rmw_fastrtps_cpp, shared by the ros2
// adapters' pairs (ros2.cpp) and discovery participants (ros2_discovery.cpp):
// rmw_fastrtps loads the file FAST{RTPS,DDS}_DEFAULT_PROFILES_FILE names (2.x
// reads the first, 3.x the second) once per process, at its first participant,
// and its participant profile marked default is every participant's.
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "adapters/fastdds/fastdds_shm.h"

namespace mwperf {
namespace ros2_profile {

struct Confinement {
  std::string ip;                  // where the UDP transport listens ("" with no participant profile)
  std::vector<std::string> peers;  // the initial peers
  bool udp = true, shm = false;
  bool whitelist = true;          // UDPv4 on `ip` only (a pair that is isolated listens everywhere)
  uint32_t peers_range = 32;      // participant ids tried on each initial peer
  size_t size = 0;                // the sample size the shared memory is sized for
  bool intraprocess_off = false;  // participants of one process talk over their transports
};

// The profile's XML: library settings, and a default participant profile unless c.ip is "".
inline std::string xml(const Confinement& c) {
  std::string x =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<dds xmlns=\"http://www.eprosima.com/XMLSchemas/fastRTPS_Profiles\">";
  if (c.intraprocess_off)
    x += "<library_settings><intraprocess_delivery>OFF</intraprocess_delivery></library_settings>";
  if (c.ip.empty()) return x + "</dds>\n";
  x += "<profiles><transport_descriptors>";
  if (c.udp)
    x += "<transport_descriptor><transport_id>mwperf_udp</transport_id><type>UDPv4</type>"
         "<sendBufferSize>4194304</sendBufferSize><receiveBufferSize>4194304</receiveBufferSize>"
         "<maxInitialPeersRange>" +
         std::to_string(c.peers_range) + "</maxInitialPeersRange>" +
         std::string(c.whitelist ? "<interfaceWhiteList><address>" + c.ip + "</address></interfaceWhiteList>" : "") +
         "</transport_descriptor>";
  // Shared memory: the same explicit segment and message size as the fastdds
  // and fastdds-jazzy adapters set (fastdds_shm.h), never rmw_fastrtps's default.
  if (c.shm)
    x += "<transport_descriptor><transport_id>mwperf_shm</transport_id><type>SHM</type><segment_size>" +
         std::to_string(fastdds_shm_segment_size(c.size)) + "</segment_size><maxMessageSize>" +
         std::to_string(fastdds_shm_max_message_size(c.size)) + "</maxMessageSize></transport_descriptor>";
  x += "</transport_descriptors><participant profile_name=\"mwperf\" is_default_profile=\"true\"><rtps>"
       "<useBuiltinTransports>false</useBuiltinTransports><userTransports>";
  if (c.shm) x += "<transport_id>mwperf_shm</transport_id>";
  if (c.udp) x += "<transport_id>mwperf_udp</transport_id>";
  x += "</userTransports>";
  if (!c.udp) return x + "</rtps></participant></profiles></dds>\n";
  x += "<builtin><metatrafficUnicastLocatorList><locator><udpv4><address>" + c.ip +
       "</address></udpv4></locator></metatrafficUnicastLocatorList><initialPeersList>";
  for (const std::string& peer : c.peers) x += "<locator><udpv4><address>" + peer + "</address></udpv4></locator>";
  x += "</initialPeersList></builtin><defaultUnicastLocatorList><locator><udpv4><address>" + c.ip +
       "</address></udpv4></locator></defaultUnicastLocatorList>";
  return x + "</rtps></participant></profiles></dds>\n";
}

// Writes `text` to a file of its own (/tmp/mwperf-ros2-*, the adapter's
// leftovers) and points Fast DDS at it; *fd holds it open until the caller
// removes it (the clean-up keeps what a live process holds). "" or why not.
inline std::string write(const std::string& text, std::string* path, int* fd) {
  char name[] = "/tmp/mwperf-ros2-XXXXXX";
  *fd = mkostemp(name, O_CLOEXEC);
  if (*fd < 0) return std::string("the Fast DDS profile: ") + std::strerror(errno);
  *path = name;
  if (::write(*fd, text.data(), text.size()) != ssize_t(text.size()))
    return "cannot write the Fast DDS profile " + *path;
  setenv("FASTRTPS_DEFAULT_PROFILES_FILE", name, 1);
  setenv("FASTDDS_DEFAULT_PROFILES_FILE", name, 1);
  return "";
}

// Removes what write() made.
inline void remove(std::string* path, int* fd) {
  if (!path->empty()) std::remove(path->c_str());
  path->clear();
  if (*fd >= 0) ::close(*fd);
  *fd = -1;
}

}  // namespace ros2_profile
}  // namespace mwperf
