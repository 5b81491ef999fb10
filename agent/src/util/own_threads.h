// mwperf's own threads, known by their thread ids: each registers itself when
// mwperf creates it (and leaves when it ends), so that CPU is charged to
// whoever spent it. Every thread not registered is the middleware's, whatever
// its name (a middleware thread that never names itself inherits the name of
// the thread that created it, e.g. "mwperf-main").
#pragma once

namespace mwperf {

// Registers the calling thread as mwperf's for its lifetime, and names it.
class OwnThread {
 public:
  explicit OwnThread(const char* name);
  ~OwnThread();
  OwnThread(const OwnThread&) = delete;
  OwnThread& operator=(const OwnThread&) = delete;

 private:
  int tid_;
};

// Whether the thread `tid` of this process is one of mwperf's, now.
bool is_own_thread(int tid);

}  // namespace mwperf
