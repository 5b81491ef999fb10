// The one table of adapters. An adapter is compiled in by its CMake option
// (MWPERF_ADAPTER_<NAME>) and registered in registry.cpp, nowhere else. One
// that must not share a process with another (its middleware's libraries
// clash) lives in a companion agent next to this one: its entry names that
// binary, and this agent hands `run --mw NAME` to it.
#pragma once
#include <memory>
#include <string>

#include "core/adapter.h"

namespace mwperf {

struct AdapterEntry {
  const char* name;
  std::unique_ptr<Adapter> (*make)();  // nullptr for an adapter in a companion agent
  const char* companion;               // that agent's file name (next to this one), nullptr when built in
};

const AdapterEntry* adapters_begin();
const AdapterEntry* adapters_end();
const AdapterEntry* find_adapter(const std::string& name);
// A built-in adapter, or nullptr (unknown, or in a companion agent).
std::unique_ptr<Adapter> make_adapter(const std::string& name);
// "name: reason;name: reason" for the adapters switched on but not built.
const char* missing_adapters();

}  // namespace mwperf
