// DDS Security for the fastdds adapters (fastdds.cpp): Fast DDS's builtin
// plugins (authentication builtin.PKI-DH, access control
// builtin.Access-Permissions, cryptography builtin.AES-GCM-GMAC), configured
// by the participant's dds.sec.* properties (Fast DDS's "Security" chapter)
// with the enclave's files; it applies what the governance says at each
// level (RTPS message, submessage, payload). Only a Fast DDS built with
// security has them: Debian's 2.9 is (HAVE_SECURITY 1 in its config.h); the
// ROS 2 wheels' 2.14 and 3.2 are not (HAVE_SECURITY 0), and refuse --security
// with that reason. A handshake or access control failure is logged, never
// returned: a log consumer of ours keeps Fast DDS's last error or warning as
// the reason of a point that cannot start or match (and writes every entry
// to stderr, where Fast DDS's default consumer would write to the agent's
// stdout, the protocol's).
#pragma once
#include <fastdds/dds/domain/qos/DomainParticipantQos.hpp>
#include <fastdds/dds/log/Log.hpp>

#include <cstdio>
#include <memory>
#include <string>

#include "adapters/fastdds/fastdds_compat.h"
#include "core/security.h"
#include "util/json.h"

#ifndef HAVE_SECURITY
#define HAVE_SECURITY 0
#endif

namespace mwperf {
namespace fastdds_security {

inline const char* levels() { return HAVE_SECURITY ? kSecurityLevels : ""; }

inline const char* note() {
  static const std::string text =
      HAVE_SECURITY ? std::string(
                          "Fast DDS's builtin plugins: PKI-DH authentication, permissions, AES-GCM/GMAC at the "
                          "levels the governance names (RTPS message, submessage, payload)")
                    : std::string("its Fast DDS ") + fastdds_compat::kBuiltVersion +
                          " is built without DDS Security (HAVE_SECURITY 0 in its config.h)";
  return text.c_str();
}

// The participant's dds.sec.* properties for the enclave `e`.
inline void apply(eprosima::fastdds::dds::DomainParticipantQos* pq, const Enclave& e) {
  auto& p = pq->properties().properties();
  const std::string auth = "dds.sec.auth.builtin.PKI-DH.", access = "dds.sec.access.builtin.Access-Permissions.";
  p.emplace_back("dds.sec.auth.plugin", "builtin.PKI-DH");
  p.emplace_back(auth + "identity_ca", "file://" + e.identity_ca);
  p.emplace_back(auth + "identity_certificate", "file://" + e.cert);
  p.emplace_back(auth + "private_key", "file://" + e.key);
  p.emplace_back("dds.sec.access.plugin", "builtin.Access-Permissions");
  p.emplace_back(access + "permissions_ca", "file://" + e.permissions_ca);
  p.emplace_back(access + "governance", "file://" + e.governance);
  p.emplace_back(access + "permissions", "file://" + e.permissions);
  p.emplace_back("dds.sec.crypto.plugin", "builtin.AES-GCM-GMAC");
}

// The effective configuration's "security" object.
inline std::string config(const std::string& level, const Enclave& e) {
  JsonObject j;
  j.str("level", level).str("enclave", e.dir);
  j.str("authentication", "DDS:Auth:PKI-DH").str("access_control", "DDS:Access:Permissions");
  j.str("cryptography", "DDS:Crypto:AES-GCM-GMAC").str("transformation", transformation(level));
  j.str("key_agreement", "DH+MODP-2048-256 when it begins the handshake, else the beginner's");
  j.num("max_blocks_per_session", 32);  // its default key update (dds.sec.crypto.maxblockspersession)
  return j.done();
}

namespace dds = eprosima::fastdds::dds;

// What Fast DDS logs as an error or a warning (its category with it), on its logging thread.
class Consumer final : public dds::LogConsumer {
 public:
  explicit Consumer(LastSaid* said) : said_(said) {}
  void Consume(const dds::Log::Entry& entry) override {
    const std::string text =
        std::string("[") + (entry.context.category ? entry.context.category : "") + "] " + entry.message;
    std::fprintf(stderr, "fastdds: %s\n", text.c_str());
    if (entry.kind == dds::Log::Kind::Error || entry.kind == dds::Log::Kind::Warning) said_->note(text);
  }

 private:
  LastSaid* said_;
};

inline LastSaid& said() {
  static LastSaid s;
  return s;
}

// From now on, Fast DDS's errors and warnings come to said() (the process's log: once).
inline void listen() {
  static const bool done = [] {
    dds::Log::ClearConsumers();
    dds::Log::RegisterConsumer(std::make_unique<Consumer>(&said()));
    dds::Log::SetVerbosity(dds::Log::Kind::Warning);
    return true;
  }();
  (void)done;
}

// `reason` with what Fast DDS logged last (its logging thread flushed first).
inline std::string with(const std::string& reason) {
  dds::Log::Flush();
  return said().with(reason, "Fast DDS");
}

}  // namespace fastdds_security
}  // namespace mwperf
