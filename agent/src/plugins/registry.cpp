// The one table of adapters: one line each, in `mwperf-agent list`'s order,
//   X("name", name as a C identifier (its factory make_<it>_adapter), clean or nullptr)
// for the folder src/adapters/<name>/, whose adapter.cmake builds it. CMake
// defines MWPERF_STATE_<name as a C identifier> in each executable for each
// folder: 1 the adapter is linked in, 2 it is a plugin (plugins.h), 0 neither
// (its line then makes no entry). A line without a folder does not compile.
#include "plugins/registry.h"

#include "adapters/connext/connext_leftovers.h"
#include "plugins/plugins.h"

#define MWPERF_ADAPTERS(X)                   \
  X("udp", udp, nullptr)                     \
  X("tcp", tcp, nullptr)                     \
  X("cyclonedds", cyclonedds, nullptr)       \
  X("cyclonedds11", cyclonedds11, nullptr)   \
  X("fastdds", fastdds, nullptr)             \
  X("fastdds-jazzy", fastdds_jazzy, nullptr) \
  X("fastdds3", fastdds3, nullptr)           \
  X("connext", connext, clean_connext_stale) \
  X("iceoryx", iceoryx, nullptr)             \
  X("zenoh", zenoh, nullptr)                 \
  X("iceoryx2", iceoryx2, nullptr)           \
  X("ros1", ros1, nullptr)                   \
  X("ros2", ros2, nullptr)                   \
  X("ros2-kilted", ros2_kilted, nullptr)

#define MWPERF_CAT(a, b) MWPERF_CAT_(a, b)
#define MWPERF_CAT_(a, b) a##b
#define MWPERF_DECLARE(name, id, clean) std::unique_ptr<Adapter> make_##id##_adapter();
#define MWPERF_ENTRY(name, id, clean) MWPERF_CAT(MWPERF_ENTRY_, MWPERF_STATE_##id)(name, make_##id##_adapter, clean)
#define MWPERF_ENTRY_0(name, make, clean)
#define MWPERF_ENTRY_1(name, make, clean) {name, make, clean},
#define MWPERF_ENTRY_2(name, make, clean) {name, nullptr, clean},

namespace mwperf {

MWPERF_ADAPTERS(MWPERF_DECLARE)

namespace {
const AdapterEntry kAdapters[] = {MWPERF_ADAPTERS(MWPERF_ENTRY){nullptr, nullptr, nullptr}};
}  // namespace

const AdapterEntry* adapters_begin() { return kAdapters; }
const AdapterEntry* adapters_end() { return kAdapters + (sizeof kAdapters / sizeof kAdapters[0]) - 1; }

const AdapterEntry* find_adapter(const std::string& name) {
  for (const AdapterEntry* e = adapters_begin(); e != adapters_end(); ++e)
    if (name == e->name) return e;
  return nullptr;
}

std::unique_ptr<Adapter> make_adapter(const std::string& name, std::string* why) {
  std::string reason;
  const AdapterEntry* e = find_adapter(name);
  if (e != nullptr && e->make != nullptr) return e->make();
  const Plugin* p = e != nullptr ? load_plugin(name, &reason) : nullptr;
  if (why != nullptr) *why = e == nullptr ? "not an adapter of this agent" : reason;
  return p != nullptr ? p->make() : nullptr;
}

const char* missing_adapters() { return MWPERF_MISSING_ADAPTERS; }

}  // namespace mwperf
