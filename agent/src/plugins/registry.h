// The one table of adapters. An adapter is built by its folder's adapter.cmake
// (src/adapters/<name>/; option MWPERF_ADAPTER_<NAME>) and registered in
// registry.cpp (one line), nowhere else: into
// this executable (the raw sockets of the agent, every adapter of the unit
// tests), or as a plugin that is loaded when a point needs it (plugins.h).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/adapter.h"

namespace mwperf {

struct AdapterEntry {
  const char* name;
  std::unique_ptr<Adapter> (*make)();  // nullptr for an adapter in a plugin
  // What killed processes of this middleware left and globs cannot name
  // (System V objects), removed where stale (their process gone); returns
  // what was removed. Part of the agent executable, never of a plugin: the
  // clean-up loads no middleware (loading ROS 2's would make the very
  // LTTng-UST segments the clean-up removes). nullptr: nothing of the kind.
  std::vector<std::string> (*clean)();
};

const AdapterEntry* adapters_begin();
const AdapterEntry* adapters_end();
const AdapterEntry* find_adapter(const std::string& name);
// The adapter (its plugin loaded if it is one), or nullptr: unknown, or its
// plugin cannot be loaded, with the reason in *why.
std::unique_ptr<Adapter> make_adapter(const std::string& name, std::string* why = nullptr);
// "name: reason;name: reason" for the adapters switched on but not built.
const char* missing_adapters();

}  // namespace mwperf
