// Which version of a middleware library a plugin runs on: the library loaded
// in the process, not the headers it was built against (an rmw, a wheel's
// copy, the system's). Shared by the adapters that record the libraries under
// them (ros2; fastdds and fastdds-jazzy).
#pragma once

#include <string>

namespace mwperf {

// The version in the file name of a library loaded in this process whose name
// starts with `stem` ("libfastrtps.so" -> "2.14.5" from libfastrtps.so.2.14.5,
// the real file of the name it was loaded by), or "" when none is loaded.
std::string loaded_version(const char* stem);

// The loaded library's version in full: its file name may say only what its
// soname does ("2.14" of the ROS 2 wheels' libfastrtps.so.2.14); the headers'
// `built` ("2.14.5") stands for it when it agrees with the file name (and
// starts with it), else the file name's. "" when none is loaded.
std::string loaded_version(const char* stem, const std::string& built);

}  // namespace mwperf
