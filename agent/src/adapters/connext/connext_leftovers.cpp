#include "adapters/connext/connext_leftovers.h"

#include <dirent.h>
#include <signal.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <set>
#include <sstream>

namespace mwperf {
namespace {

constexpr long kShmBase = 0x400000, kSemBases[] = {0x800000, 0xb00000};
constexpr long kFirstPort = 7400, kLastPort = 0xffff;
constexpr time_t kSemMinAgeS = 10;
const char* const kPrefix = "mwperf-connext-";

// A process that has not ended: a zombie (ended, its parent not yet told:
// an orphan waits for init to reap it, which may take seconds in a
// container) has released its memory, attachments and files, so it counts
// as gone, as it does for the kernel's nattch.
bool alive(long pid) {
  if (pid <= 0 || (kill(pid_t(pid), 0) != 0 && errno != EPERM)) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;  // cannot tell: keep what may be its
  const size_t paren = line.rfind(')');
  const char state = paren != std::string::npos && paren + 2 < line.size() ? line[paren + 2] : '?';
  return state != 'Z' && state != 'X';
}

std::string hex_key(long key) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08lx", key);
  return b;
}

// The port of a key of `base`, or -1.
long port_of(long key, long base) {
  const long port = key - base;
  return port >= kFirstPort && port <= kLastPort ? port : -1;
}

// Rows of a /proc/sysvipc table as whitespace-separated numbers (header skipped).
std::vector<std::vector<long>> rows(const std::string& path) {
  std::vector<std::vector<long>> out;
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::vector<long> row;
    long v;
    while (fields >> v) row.push_back(v);
    out.push_back(row);
  }
  return out;
}

}  // namespace

std::string connext_xml_path(int n, const std::string& dir) {
  return dir + "/" + kPrefix + std::to_string(getpid()) + "-" + std::to_string(n) + ".xml";
}

std::vector<std::string> clean_connext_leftovers(const std::string& sysvipc, const std::string& dir) {
  std::vector<std::string> removed;
  const long uid = long(geteuid());
  // /proc/sysvipc/shm: key shmid perms size cpid lpid nattch uid gid cuid cgid atime dtime ctime ...
  std::set<long> segments, gone;  // ports whose segment stays; whose stale segment went now
  for (const auto& r : rows(sysvipc + "/shm")) {
    if (r.size() < 8) continue;
    const long port = port_of(r[0], kShmBase);
    if (port < 0) continue;
    const bool stale = !alive(r[4]) && r[6] == 0 && (uid == 0 || r[7] == uid);
    if (stale && shmctl(int(r[1]), IPC_RMID, nullptr) == 0) {
      removed.push_back("shm " + hex_key(r[0]));
      gone.insert(port);
    } else {
      segments.insert(port);
    }
  }
  // /proc/sysvipc/sem: key semid perms nsems uid gid cuid cgid otime ctime
  const time_t now = time(nullptr);
  for (const auto& r : rows(sysvipc + "/sem")) {
    if (r.size() < 10) continue;
    long port = -1;
    for (long base : kSemBases)
      if (port < 0) port = port_of(r[0], base);
    if (port < 0 || segments.count(port) != 0 || (uid != 0 && r[4] != uid)) continue;
    if (gone.count(port) == 0 && now - std::max(r[8], r[9]) < kSemMinAgeS) continue;
    if (semctl(int(r[1]), 0, IPC_RMID) == 0) removed.push_back("sem " + hex_key(r[0]));
  }
  if (DIR* d = opendir(dir.c_str())) {
    while (const dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.rfind(kPrefix, 0) != 0 || name.size() < 5 || name.compare(name.size() - 4, 4, ".xml") != 0) continue;
      const long pid = std::strtol(name.c_str() + std::char_traits<char>::length(kPrefix), nullptr, 10);
      const std::string path = dir + "/" + name;
      if (!alive(pid) && unlink(path.c_str()) == 0) removed.push_back(path);
    }
    closedir(d);
  }
  return removed;
}

std::vector<std::string> clean_connext_stale() { return clean_connext_leftovers(); }

}  // namespace mwperf
