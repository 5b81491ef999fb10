// What a connext agent leaves behind when it is killed, and its removal.
//
// * Connext's SHMEM transport keeps each receive port in a System V
//   shared-memory segment, key 0x400000 + port, guarded by two semaphores,
//   keys 0x800000 + port and 0xb00000 + port (ipcs shows them). Connext
//   removes them when the participant is deleted; a killed process leaves
//   them. Stale: the segment's creator is gone and nothing is attached; a
//   semaphore of such a segment's port, or of a port without a segment that
//   is older than a few seconds (a participant being created makes both
//   within milliseconds).
// * The adapter's XML application file, /tmp/mwperf-connext-<pid>-<n>.xml,
//   removed at close(); stale when its process is gone.
//
// Only objects of RTPS ports (7400 and up) owned by this user are considered.
// Built into the agent executable, not the plugin (no Connext library needed):
// `mwperf-agent cleanup` runs it without loading Connext.
#pragma once
#include <string>
#include <vector>

namespace mwperf {

// The XML file of this process's n-th connext endpoint pair.
std::string connext_xml_path(int n, const std::string& dir = "/tmp");

// Removes what dead connext processes left; returns what it removed
// ("shm 0x004023c8", "sem 0x008023c8", "/tmp/mwperf-connext-1234-1.xml").
// `sysvipc` is where the kernel lists System V objects (/proc/sysvipc).
std::vector<std::string> clean_connext_leftovers(const std::string& sysvipc = "/proc/sysvipc",
                                                 const std::string& dir = "/tmp");
// The same on this host's tables and /tmp: the connext registry entry's clean.
std::vector<std::string> clean_connext_stale();

}  // namespace mwperf
