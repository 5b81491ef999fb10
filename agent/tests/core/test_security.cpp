#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/description.h"
#include "core/options.h"
#include "core/security.h"

using namespace mwperf;

namespace {
std::string parse(std::vector<const char*> args, Options* o) {
  args.insert(args.begin(), "mwperf-agent");
  return parse_options(int(args.size()), args.data(), o);
}

// A folder of its own under the temporary directory, removed with its files.
struct Folder {
  std::string path;
  Folder() {
    char name[] = "/tmp/mwperf-test-enclave-XXXXXX";
    path = mkdtemp(name);
  }
  ~Folder() { std::system(("rm -rf " + path).c_str()); }
  void put(const char* file) const {
    if (std::FILE* f = std::fopen((path + "/" + file).c_str(), "w")) std::fclose(f);
  }
};

const char* kFiles[] = {"identity_ca.cert.pem",    "cert.pem",       "key.pem",
                        "permissions_ca.cert.pem", "governance.p7s", "permissions.p7s"};
}  // namespace

TEST(Security, AnAdapterWithoutItIsRefusedInItsOwnWords) {
  Description d;
  Options o;
  ASSERT_EQ(parse({"run", "--role", "pub", "--mw", "x", "--security", "encrypt"}, &o), "");
  settle(&o, d);
  EXPECT_EQ(refuse("x", d, o), "--security encrypt: not supported by x (no DDS Security)");
  d.security_note = "its Fast DDS is built without DDS Security";
  EXPECT_EQ(refuse("x", d, o), "--security encrypt: not supported by x (its Fast DDS is built without DDS Security)");
  d.securities = kSecurityLevels;
  EXPECT_EQ(refuse("x", d, o), "");
  Options plain;
  ASSERT_EQ(parse({"run", "--role", "pub", "--mw", "x"}, &plain), "");
  d.securities = "";
  settle(&plain, d);
  EXPECT_EQ(refuse("x", d, plain), "");  // none, the default, asks for nothing
}

TEST(Security, ASecuredPointNeedsAWholeEnclave) {
  Folder folder;
  Options o;
  ASSERT_EQ(parse({"run", "--role", "sub", "--mw", "x", "--security", "sign"}, &o), "");
  EXPECT_EQ(check_enclave(o), "--security sign: needs --enclave DIR (its keys and documents)");
  o.qos.enclave = folder.path + "/nowhere";
  EXPECT_EQ(check_enclave(o), "--enclave: '" + o.qos.enclave + "' is no enclave (no folder " + o.qos.enclave + ")");
  o.qos.enclave = folder.path;
  for (const char* f : kFiles) {
    EXPECT_EQ(check_enclave(o),
              "--enclave: '" + folder.path + "' is no enclave (no readable " + f + " in " + folder.path + ")");
    folder.put(f);
  }
  EXPECT_EQ(check_enclave(o), "");
  Enclave e;
  EXPECT_EQ(read_enclave(folder.path, &e), "");
  EXPECT_EQ(e.key, folder.path + "/key.pem");
  EXPECT_EQ(e.governance, folder.path + "/governance.p7s");
  o.qos.security = "none";
  o.qos.enclave.clear();
  EXPECT_EQ(check_enclave(o), "");  // an unsecured point needs none
}

TEST(Security, EachLevelsTransformationAndWhatWasSaidLast) {
  EXPECT_STREQ(transformation("auth"), "");
  EXPECT_STREQ(transformation("sign"), "AES-256-GMAC");
  EXPECT_STREQ(transformation("encrypt"), "AES-256-GCM");
  EXPECT_FALSE(secured("") || secured("none"));
  EXPECT_TRUE(secured("auth"));
  LastSaid said;
  EXPECT_EQ(said.with("no match", "X"), "no match");
  said.note("first\n");
  said.note("handshake failed:\nbad certificate\n");
  EXPECT_EQ(said.with("no match", "X"), "no match; X said: first ... handshake failed: bad certificate");
}
