#include "util/own_threads.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <vector>

namespace mwperf {
namespace {

std::mutex& mu() {
  static std::mutex m;
  return m;
}

std::vector<int>& tids() {
  static std::vector<int> t;
  return t;
}

}  // namespace

OwnThread::OwnThread(const char* name) : tid_(int(syscall(SYS_gettid))) {
  pthread_setname_np(pthread_self(), name);
  std::lock_guard<std::mutex> lk(mu());
  tids().push_back(tid_);
}

OwnThread::~OwnThread() {
  std::lock_guard<std::mutex> lk(mu());
  auto& t = tids();
  t.erase(std::remove(t.begin(), t.end(), tid_), t.end());  // the id may be reused by a thread that is not ours
}

bool is_own_thread(int tid) {
  std::lock_guard<std::mutex> lk(mu());
  const auto& t = tids();
  return std::find(t.begin(), t.end(), tid) != t.end();
}

}  // namespace mwperf
