// See loaded_libs.h.
#include "util/loaded_libs.h"

#include <limits.h>
#include <link.h>
#include <stdlib.h>

#include <cstring>

namespace mwperf {

std::string loaded_version(const char* stem) {
  struct Look {
    const char* stem;
    std::string version;
  } look{stem, ""};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* l = static_cast<Look*>(data);
        char real[PATH_MAX];
        if (info->dlpi_name == nullptr || realpath(info->dlpi_name, real) == nullptr) return 0;
        const char* base = std::strrchr(real, '/');
        base = base ? base + 1 : real;
        const size_t n = std::strlen(l->stem);
        if (std::strncmp(base, l->stem, n) != 0 || base[n] != '.') return 0;
        l->version = base + n + 1;
        return 1;
      },
      &look);
  return look.version;
}

std::string loaded_version(const char* stem, const std::string& built) {
  const std::string loaded = loaded_version(stem);
  if (loaded.empty() || built.compare(0, loaded.size(), loaded) != 0) return loaded;
  return built.size() == loaded.size() || built[loaded.size()] == '.' ? built : loaded;
}

}  // namespace mwperf
