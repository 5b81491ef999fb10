// The ament index of the prefixes ROS 2 is installed in (ros2.cpp): which
// rmw implementations are there, where, and a package's version.
#pragma once
#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace mwperf {
namespace ament_index {

inline std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (const dirent* e = readdir(d))
      if (e->d_name[0] != '.') out.push_back(e->d_name);
    closedir(d);
  }
  return out;
}

// The prefixes an rmw may be installed in: AMENT_PREFIX_PATH's, then the one
// this adapter was built against (MWPERF_ROS2_PREFIX, ros2.cpp's build).
inline std::vector<std::string> ament_prefixes() {
  std::vector<std::string> out;
  const char* env = std::getenv("AMENT_PREFIX_PATH");
  for (std::string rest = env ? env : ""; !rest.empty();) {
    const size_t colon = rest.find(':');
    if (colon != 0) out.push_back(rest.substr(0, colon));
    rest = colon == std::string::npos ? "" : rest.substr(colon + 1);
  }
  out.push_back(MWPERF_ROS2_PREFIX);
  return out;
}

// The prefix whose ament index lists `rmw` as an rmw implementation, or "".
inline std::string rmw_prefix(const std::string& rmw) {
  for (const std::string& p : ament_prefixes())
    if (access((p + "/share/ament_index/resource_index/rmw_typesupport/" + rmw).c_str(), F_OK) == 0) return p;
  return "";
}

// Every rmw implementation the ament indexes list (but the proxy).
inline std::string installed_rmws() {
  std::string out;
  for (const std::string& p : ament_prefixes()) {
    const std::string dir = p + "/share/ament_index/resource_index/rmw_typesupport";
    for (const std::string& name : list_dir(dir))
      if (name != "rmw_implementation" && out.find(name) == std::string::npos) out += (out.empty() ? "" : ", ") + name;
  }
  return out.empty() ? "none" : out;
}

// <version> of a package, from its package.xml in `prefix`, or "".
inline std::string package_version(const std::string& prefix, const std::string& package) {
  FILE* f = std::fopen((prefix + "/share/" + package + "/package.xml").c_str(), "r");
  if (f == nullptr) return "";
  char line[512];
  std::string version;
  while (version.empty() && std::fgets(line, sizeof line, f) != nullptr) {
    const char* open = std::strstr(line, "<version>");
    const char* close = open ? std::strstr(open, "</version>") : nullptr;
    if (close != nullptr) version.assign(open + 9, close);
  }
  std::fclose(f);
  return version;
}

}  // namespace ament_index
}  // namespace mwperf
