// The one table of adapters built into this agent. Each adapter is compiled in
// by its CMake option (MWPERF_ADAPTER_<NAME>) and registered in registry.cpp,
// nowhere else; those that could not be built are named with the reason.
#pragma once
#include <memory>
#include <string>

#include "core/adapter.h"

namespace mwperf {

struct AdapterEntry {
  const char* name;
  std::unique_ptr<Adapter> (*make)();
};

const AdapterEntry* adapters_begin();
const AdapterEntry* adapters_end();
std::unique_ptr<Adapter> make_adapter(const std::string& name);
// "name: reason;name: reason" for the adapters switched on but not built.
const char* missing_adapters();

}  // namespace mwperf
