#include "util/sysinfo.h"

#include <dirent.h>
#include <sched.h>
#include <sys/resource.h>
#include <time.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "util/own_threads.h"

namespace mwperf {

std::string pin_to_cpu(int cpu) {
  if (cpu < 0) return "";
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0)
    return "cannot pin to cpu " + std::to_string(cpu) + ": " + std::strerror(errno);
  return "";
}

std::vector<int> current_affinity() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int i = 0; i < CPU_SETSIZE; ++i)
    if (CPU_ISSET(i, &set)) cpus.push_back(i);
  return cpus;
}

long status_kb(const char* field) {
  long v = 0;
  if (FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    const size_t n = std::strlen(field);
    while (std::fgets(line, sizeof line, f))
      if (std::strncmp(line, field, n) == 0 && line[n] == ':') {
        v = std::strtol(line + n + 1, nullptr, 10);
        break;
      }
    std::fclose(f);
  }
  return v;
}

namespace {

Usage process_usage() {
  rusage r;
  getrusage(RUSAGE_SELF, &r);
  Usage u;
  u.user_ns = int64_t(r.ru_utime.tv_sec) * 1000000000LL + int64_t(r.ru_utime.tv_usec) * 1000;
  u.sys_ns = int64_t(r.ru_stime.tv_sec) * 1000000000LL + int64_t(r.ru_stime.tv_usec) * 1000;
  return u;
}

template <class F>
void each_thread(F f) {
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] >= '0' && e->d_name[0] <= '9') f(std::atoi(e->d_name));
    closedir(d);
  }
}

ThreadTime read_thread(int tid) {
  const std::string dir = "/proc/self/task/" + std::to_string(tid);
  ThreadTime t;
  t.tid = tid;
  t.own = is_own_thread(tid);
  if (FILE* f = std::fopen((dir + "/comm").c_str(), "r")) {
    char name[64] = {};
    if (std::fgets(name, sizeof name, f)) t.name = std::string(name, std::strcspn(name, "\n"));
    std::fclose(f);
  }
  if (FILE* f = std::fopen((dir + "/stat").c_str(), "r")) {
    char line[1024] = {};
    if (std::fgets(line, sizeof line, f)) {
      const char* at = std::strrchr(line, ')');  // the name may hold spaces and parentheses
      long long start = 0;
      // after ") ": field 3 (state) ... field 22 (starttime)
      if (at != nullptr &&
          std::sscanf(at + 1,
                      " %*c %*d %*d %*d %*d %*d %*u %*lu %*lu %*lu %*lu %*lu %*lu %*ld %*ld %*ld %*ld %*ld %*ld %lld",
                      &start) == 1)
        t.start = start;
    }
    std::fclose(f);
  }
  if (FILE* f = std::fopen((dir + "/schedstat").c_str(), "r")) {
    long long run = 0;
    if (std::fscanf(f, "%lld", &run) == 1) t.cpu_ns = run;
    std::fclose(f);
  }
  return t;
}

// A thread's CPU clock (the run time schedstat shows), read with one system
// call: the clock id pthread_getcpuclockid gives, made from the thread id
// (the kernel's MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)). -1: it has ended.
int64_t thread_clock_ns(int tid) {
  const clockid_t clock = clockid_t((~unsigned(tid) << 3) | 6);
  timespec ts{};
  if (clock_gettime(clock, &ts) != 0) return -1;
  return int64_t(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

}  // namespace

Usage usage_now() {
  Usage u = process_usage();
  // Peak RSS of this process image. Not ru_maxrss: Linux carries that across
  // execve, so an agent started by a bigger parent would report the parent's peak.
  u.maxrss_kb = status_kb("VmHWM");
  each_thread([&u](int tid) { u.threads.push_back(read_thread(tid)); });
  return u;
}

Usage usage_quick(std::map<int, ThreadTime>* known) {
  Usage u = process_usage();
  each_thread([&](int tid) {
    auto it = known->find(tid);
    if (it == known->end()) it = known->emplace(tid, read_thread(tid)).first;
    const int64_t cpu = thread_clock_ns(tid);
    if (cpu < 0) return;  // it has just ended: its last reading stands
    it->second.cpu_ns = cpu;
    it->second.own = is_own_thread(tid);
  });
  // A thread that ended in the window (the subscriber's control and monitor
  // threads at the stop, before its last sample) keeps its last reading.
  for (const auto& [tid, t] : *known) u.threads.push_back(t);
  return u;
}

}  // namespace mwperf
