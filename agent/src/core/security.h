// DDS Security as the adapters that honour --security apply it: the enclave
// the controller hands over (--enclave DIR, a folder of SROS2's file names:
// the controller makes the keystore, or takes the user's), the names of what
// each level uses, and what the middleware said last (a handshake's failure
// is logged, never returned: it becomes the reason of a point that does not
// match).
#pragma once
#include <mutex>
#include <string>

namespace mwperf {

// The levels of --security, weakest first ("none": no security plugins at all).
constexpr const char* kSecurityLevels = "none,auth,sign,encrypt";

// Whether `level` ("" is none) asks for DDS Security.
inline bool secured(const std::string& level) { return !level.empty() && level != "none"; }

// The files of an enclave (SROS2's names in its folder), as absolute paths.
struct Enclave {
  std::string dir, identity_ca, cert, key, permissions_ca, governance, permissions;
};

// *e of the enclave folder `dir`: "" or one phrase naming the first file
// missing or unreadable ("no cert.pem in DIR").
std::string read_enclave(const std::string& dir, Enclave* e);

// The builtin plugins' transformation at `level` (both Cyclone DDS and Fast
// DDS use 256-bit keys unless dds.sec.crypto.keysize says 128, which mwperf
// never sets): "" at auth (nothing transformed), AES-256-GMAC at sign (a MAC,
// no encryption), AES-256-GCM at encrypt (encrypt, then MAC).
const char* transformation(const std::string& level);

// The first and the last warning or error a middleware logged (its log
// callback's words: the first is the cause, as a plugin's refusal, the last
// what it led to), kept for the reason of a failure; thread-safe, never on
// the data path.
class LastSaid {
 public:
  void note(const std::string& text);
  std::string last() const;
  // `reason` with "; <who> said: <first> ... <last>" appended when it said anything.
  std::string with(const std::string& reason, const std::string& who) const;

 private:
  mutable std::mutex mu_;
  std::string first_, last_;
};

}  // namespace mwperf
