// DDS Security for the ros2 adapters (ros2.cpp), as SROS2 runs it: rcl reads
// ROS_SECURITY_KEYSTORE, the enclave (ROS_SECURITY_ENCLAVE_OVERRIDE, as `ros2
// run --ros-args --enclave`), ROS_SECURITY_ENABLE and ROS_SECURITY_STRATEGY
// when it initializes, finds the enclave's files in the keystore and hands
// them to the rmw, whose DDS applies them. The controller's enclave lies in a
// keystore of SROS2's layout (KEYSTORE/enclaves/NAME), so the same folder
// serves. Whether the rmw's DDS can: the wheels' rmw_fastrtps_cpp runs on a
// Fast DDS built without security (HAVE_SECURITY 0 in its config.h, 2.14 for
// Jazzy, 3.2 for Kilted), so --security is refused with that reason; a Fast
// DDS built with it turns the levels on, with nothing else to change here.
#pragma once
#include <cstdlib>
#include <string>

#include "core/adapter.h"
#include "core/security.h"

#ifndef HAVE_SECURITY
#define HAVE_SECURITY 0
#endif

namespace mwperf {
namespace ros2_security {

inline const char* levels() { return HAVE_SECURITY ? kSecurityLevels : ""; }

// `version`: the Fast DDS of its rmw_fastrtps_cpp, as built against.
inline const char* note(const char* version) {
  static const std::string text =
      HAVE_SECURITY ? std::string("SROS2: rcl's ROS_SECURITY_* settings for the enclave's keystore; its Fast DDS ") +
                          version + " applies the governance"
                    : std::string("its rmw_fastrtps_cpp's Fast DDS ") + version +
                          " is built without DDS Security (HAVE_SECURITY 0 in its config.h); an enclave in a keystore "
                          "of SROS2's layout serves once one is built with it";
  return text.c_str();
}

// rcl's environment for the enclave of cfg (before rcl_init), none when the
// point is not secured (whatever the shell had set): "" or why not.
inline std::string apply(const AdapterConfig& cfg) {
  if (!secured(cfg.security)) {
    for (const char* name : {"ROS_SECURITY_KEYSTORE", "ROS_SECURITY_ENCLAVE_OVERRIDE", "ROS_SECURITY_ENABLE"})
      unsetenv(name);
    return "";
  }
  Enclave e;
  if (const std::string why = read_enclave(cfg.enclave, &e); !why.empty()) return "--enclave: " + why;
  const size_t at = e.dir.rfind("/enclaves/");
  if (at == std::string::npos)
    return "--enclave " + e.dir + ": not in a keystore of SROS2's layout (KEYSTORE/enclaves/NAME)";
  setenv("ROS_SECURITY_KEYSTORE", e.dir.substr(0, at).c_str(), 1);
  setenv("ROS_SECURITY_ENCLAVE_OVERRIDE", e.dir.substr(at + 9).c_str(), 1);  // "/NAME"
  setenv("ROS_SECURITY_ENABLE", "true", 1);
  setenv("ROS_SECURITY_STRATEGY", "Enforce", 1);
  return "";
}

}  // namespace ros2_security
}  // namespace mwperf
