#include "core/security.h"

#include <unistd.h>

#include <cstdlib>
#include <memory>

namespace mwperf {

std::string read_enclave(const std::string& dir, Enclave* e) {
  std::unique_ptr<char, decltype(&std::free)> real(realpath(dir.c_str(), nullptr), &std::free);
  if (!real) return "no folder " + dir;
  e->dir = real.get();
  struct File {
    const char* name;
    std::string* path;
  };
  const File files[] = {{"identity_ca.cert.pem", &e->identity_ca},
                        {"cert.pem", &e->cert},
                        {"key.pem", &e->key},
                        {"permissions_ca.cert.pem", &e->permissions_ca},
                        {"governance.p7s", &e->governance},
                        {"permissions.p7s", &e->permissions}};
  for (const File& f : files) {
    *f.path = e->dir + "/" + f.name;
    if (access(f.path->c_str(), R_OK) != 0) return std::string("no readable ") + f.name + " in " + e->dir;
  }
  return "";
}

const char* transformation(const std::string& level) {
  if (level == "sign") return "AES-256-GMAC";
  if (level == "encrypt") return "AES-256-GCM";
  return "";
}

void LastSaid::note(const std::string& text) {
  std::string line = text;
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  for (char& c : line)
    if (c == '\n') c = ' ';
  if (line.size() > 400) line.resize(400);
  std::lock_guard<std::mutex> lk(mu_);
  if (first_.empty()) first_ = line;
  last_ = line;
}

std::string LastSaid::last() const {
  std::lock_guard<std::mutex> lk(mu_);
  return last_;
}

std::string LastSaid::with(const std::string& reason, const std::string& who) const {
  std::string first, last;
  {
    std::lock_guard<std::mutex> lk(mu_);
    first = first_, last = last_;
  }
  if (last.empty()) return reason;
  return reason + "; " + who + " said: " + first + (last == first ? "" : " ... " + last);
}

}  // namespace mwperf
