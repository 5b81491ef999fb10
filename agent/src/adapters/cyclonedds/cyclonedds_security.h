// DDS Security for the cyclonedds adapters (cyclonedds.cpp): Cyclone's own
// builtin plugins (authentication DDS:Auth:PKI-DH, access control
// DDS:Access:Permissions, cryptography DDS:Crypto:AES-GCM-GMAC), loaded from
// beside the libddsc in the process (Debian's 0.10 keeps them in
// libddsc0debian/, Cyclone 11's install tree in lib/), configured by the
// domain's <Security> element (the manual's "DDS Security" chapter) with the
// enclave's files. Cyclone applies what the governance says at each level:
// the RTPS message, the submessage, the payload. A handshake or access
// control failure is logged, never returned: the adapter reads the last
// warning or error Cyclone logged (class Said) as the reason of a point that
// cannot start or match.
#pragma once
#include <dds/dds.h>
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "core/security.h"
#include "util/json.h"

namespace mwperf {
namespace cyclone_security {

constexpr const char* kPlugins[] = {"auth", "ac", "crypto"};

// The folder of the security plugins beside the libddsc this process loaded,
// "" when they are not there.
inline std::string plugin_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&dds_create_participant), &info) == 0 || info.dli_fname == nullptr) return "";
  std::unique_ptr<char, decltype(&std::free)> real(realpath(info.dli_fname, nullptr), &std::free);
  std::string dir = real ? real.get() : info.dli_fname;
  dir = dir.substr(0, dir.rfind('/'));
  for (const std::string& d : {dir, dir + "/libddsc0debian"}) {
    bool all = true;
    for (const char* p : kPlugins) all = all && access((d + "/libdds_security_" + p + ".so").c_str(), R_OK) == 0;
    if (all) return d;
  }
  return "";
}

inline const std::string& plugins() {
  static const std::string dir = plugin_dir();
  return dir;
}

// What `list` says: the levels and where they are applied, or why none.
inline const char* note() {
  static const std::string text =
      plugins().empty()
          ? "Cyclone DDS's security plugins (libdds_security_auth, _ac, _crypto) are not beside its libddsc"
          : "Cyclone's builtin plugins (" + plugins() +
                "): PKI-DH authentication, permissions, AES-GCM/GMAC at the levels the governance names (RTPS "
                "message, submessage, payload)";
  return text.c_str();
}

// The domain configuration's <Security> element for the enclave `e`.
inline std::string xml(const Enclave& e) {
  auto lib = [](const char* p, const char* init) {
    return "<Library path=\"" + plugins() + "/libdds_security_" + p + ".so\" initFunction=\"init_" + init +
           "\" finalizeFunction=\"finalize_" + init + "\"/>";
  };
  return "<Security><Authentication>" + lib("auth", "authentication") + "<IdentityCA>file:" + e.identity_ca +
         "</IdentityCA><IdentityCertificate>file:" + e.cert + "</IdentityCertificate><PrivateKey>file:" + e.key +
         "</PrivateKey></Authentication><AccessControl>" + lib("ac", "access_control") +
         "<PermissionsCA>file:" + e.permissions_ca + "</PermissionsCA><Governance>file:" + e.governance +
         "</Governance><Permissions>file:" + e.permissions + "</Permissions></AccessControl><Cryptographic>" +
         lib("crypto", "crypto") + "</Cryptographic></Security>";
}

// The effective configuration's "security" object.
inline std::string config(const std::string& level, const Enclave& e) {
  JsonObject j;
  j.str("level", level).str("enclave", e.dir).str("plugins", plugins());
  j.str("authentication", "DDS:Auth:PKI-DH").str("access_control", "DDS:Access:Permissions");
  j.str("cryptography", "DDS:Crypto:AES-GCM-GMAC").str("transformation", transformation(level));
  j.str("key_agreement", "ECDH+prime256v1-CEUM with an EC identity, DH+MODP-2048-256 with an RSA one");
  return j.done();
}

// What Cyclone logs as a warning or an error (a handshake's failure), kept
// for the reason of a failure: its trace at verbosity `warning` goes to an
// anonymous file of this process (memfd; Cyclone 11 exports no log sink).
class Said {
 public:
  Said() = default;
  Said(const Said&) = delete;
  Said& operator=(const Said&) = delete;
  ~Said() {
    if (fd_ >= 0) ::close(fd_);
  }
  // The domain configuration's <Tracing> element ("" when no file could be made).
  std::string xml() {
    if (fd_ < 0) fd_ = memfd_create("mwperf-cyclone-trace", MFD_CLOEXEC);
    if (fd_ < 0) return "";
    return "<Tracing><Verbosity>warning</Verbosity><OutputFile>/proc/self/fd/" + std::to_string(fd_) +
           "</OutputFile></Tracing>";
  }
  // The last line Cyclone wrote, without its time stamp and thread ("" none).
  std::string last() const {
    if (fd_ < 0) return "";
    std::string text;
    char buf[4096];
    for (off_t at = 0;;) {
      const ssize_t n = pread(fd_, buf, sizeof buf, at);
      if (n <= 0) break;
      text.append(buf, size_t(n));
      at += n;
      if (text.size() > (1u << 20)) text.erase(0, text.size() - (64u << 10));
    }
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    // The last entry: from the last line that starts with a time stamp, its continuation lines
    // (OpenSSL's error queue under a failed handshake) joined to it.
    size_t start = text.size();
    while (start > 0) {
      const size_t nl = text.rfind('\n', start - 1);
      const size_t from = nl == std::string::npos ? 0 : nl + 1;
      if (stamped(text, from) || from == 0) {
        start = from;
        break;
      }
      start = nl;
    }
    std::string line = text.substr(start);
    for (char& c : line)
      if (c == '\n') c = ' ';
    const size_t thread = line.find("] ");  // "1700000000.123456 [0]   thread: what"
    if (thread != std::string::npos) line.erase(0, line.find_first_not_of(' ', thread + 2));
    return line.size() > 400 ? line.substr(0, 400) : line;
  }
  // Whether the line at `at` begins with Cyclone's time stamp ("1700000000.123456 [").
  static bool stamped(const std::string& text, size_t at) {
    size_t i = at, digits = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i, ++digits;
    return digits > 0 && i < text.size() && text[i] == '.';
  }
  // `reason` with what Cyclone said last appended.
  std::string with(const std::string& reason) const {
    const std::string said = last();
    return said.empty() ? reason : reason + "; Cyclone said: " + said;
  }

 private:
  int fd_ = -1;
};

}  // namespace cyclone_security
}  // namespace mwperf
