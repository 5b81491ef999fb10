// Loading adapter plugins on demand, the way rcl loads an rmw implementation:
// `--mw NAME` dlopen()s adapters/libmwperf-NAME.so next to the agent
// executable (found through /proc/self/exe), so that a point maps its own
// middleware's libraries and no other's, and a host without one middleware's
// library refuses only that adapter (with the loader's reason).
#pragma once
#include <functional>
#include <string>

#include "plugins/plugin.h"

namespace mwperf {

// The folder of the agent executable, with its trailing '/'.
std::string agent_dir();
// The plugin of adapter `name`, loaded once and never unloaded; nullptr with
// the reason in *why (its file missing, a library it needs missing: dlerror's
// message names it, or another build's plugin).
const Plugin* load_plugin(const std::string& name, std::string* why);
// fn() run in a child process, so that the libraries of one plugin never meet
// another's (Fast DDS 2.9 and ROS 2's Fast DDS 2.14) nor outlive it; what it
// returned, or into *why how the child ended when it returned nothing.
std::string in_child(const std::function<std::string()>& fn, std::string* why);

}  // namespace mwperf
