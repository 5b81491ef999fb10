// Discovery as a measured mode (`mwperf-agent discover`): this process is one
// participant of N, with T topics, each with one writer and one reader of
// this participant on it. Every writer writes one sample carrying the
// participant's index, kept for late readers (transient-local, reliable;
// writers keep-last 1, readers keep-all: a topic is one instance), so a reader has "its first sample" from a writer as
// soon as the two have matched and the history reached it. The core times, from the controller's `go`: until every
// reader has matched every writer it should (the middleware's own count: T x N, this participant's own writers
// included, as every DDS matches local endpoints), and until every reader has a sample from each of the N-1 other
// participants (the payload says whose: ground truth of the core's, not the middleware's count).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "util/errors.h"

namespace mwperf {

// `discover`'s options (core/option_table.cpp).
struct DiscoveryOptions {
  uint32_t participants = 0;  // N, this one included
  uint32_t topics = 0;        // T
  uint32_t index = 0;         // this participant's place, 0..N-1 (the first this process hosts)
  bool threads = false;       // --participants-as threads: the participants of a side in one process
  uint32_t hosted = 1;        // the participants this process hosts: index, index + stride, ...
  uint32_t stride = 1;
  std::string profile;  // the discovery configuration (DiscoveryParticipant::open)
  std::string nic;      // the interface discovery uses ("" = lo)
  std::string peer;     // unicast profiles: the address of the other participants
  std::string server;   // a discovery server's address (participant 0's)
  uint32_t domain = 0;
  uint32_t run_id = 0;  // names the topics
  int64_t timeout_ns = 0;
};

// One participant of a middleware, as its adapter makes it
// (Adapter::make_participant). Errors are values; last_error() says why.
class DiscoveryParticipant {
 public:
  virtual ~DiscoveryParticipant() = default;
  // Creates the participant with profile `o.profile`'s discovery ("unicast":
  // loopback only, the other participants named as unicast peers; "default":
  // the middleware's own defaults on o.nic, multicast included; "tuned": its
  // scalable settings), its T writers and T readers; each writer writes its
  // one sample. Errc::unsupported names a profile it does not have.
  virtual Errc open(const DiscoveryOptions& o) = 0;
  // The writers this participant's readers have matched, summed, as the middleware counts them.
  virtual uint64_t matched() = 0;
  // Takes what arrived; calls seen(ctx, topic, index written in the sample) for each sample.
  virtual void take(void (*seen)(void* ctx, uint32_t topic, uint32_t from), void* ctx) = 0;
  // The discovery configuration in force, a JSON object (what the record says it used).
  virtual std::string config_json() const = 0;
  virtual std::string version() const = 0;
  virtual void close() = 0;
  const std::string& last_error() const { return error_; }

 protected:
  Errc fail(Errc e, std::string msg) {
    error_ = std::move(msg);
    return e;
  }
  std::string error_;
};

// Where a discovery server (participant 0) serves, with --server: an even
// port, as RTPS's own discovery ports are (the controller's counters tell
// discovery from user data by the port's parity).
constexpr uint16_t kDiscoveryServerPort = 11810;

// Topic t of a run: the same name in every participant (and every DDS).
inline std::string discovery_topic(uint32_t run_id, uint32_t t) {
  return "rt/mwperf_disc_" + std::to_string(run_id) + "_" + std::to_string(t);
}

// The profiles any participant may be asked for (the option's choices).
constexpr const char* kDiscoveryProfiles = "unicast,default,tuned";

// `mwperf-agent discover ...`: `ready`, then at `go` (a line on stdin) opens
// its participants (o.hosted of them, ps[k] with index o.index + k x o.stride,
// each opened on a thread of its own, together) and emits one `discovered`
// event for each once all are complete or at the timeout (a participant of
// several in one process: the process's CPU and RSS shared out evenly, and
// the event says so); then serves the others until `stop` or EOF. Exit 0; 3 a
// participant could not be opened (an `error` event first); 4 incomplete at
// the timeout.
int run_discovery(const DiscoveryOptions& o, const std::vector<std::unique_ptr<DiscoveryParticipant>>& ps,
                  const char* mw);

}  // namespace mwperf
