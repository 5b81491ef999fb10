#include <gtest/gtest.h>

#include <vector>

#include "core/options.h"

using namespace mwperf;

namespace {
std::string parse(std::vector<const char*> args, Options* o) {
  args.insert(args.begin(), "mwperf-agent");
  return parse_options(int(args.size()), args.data(), o);
}
}  // namespace

TEST(Options, ValidRun) {
  Options o;
  EXPECT_EQ(parse({"run", "--role", "pub", "--mw", "udp", "--mode", "rate", "--size", "1024", "--rate-hz",
                   "100", "--port", "5000", "--cpu", "1", "--wait", "spin"},
                  &o),
            "");
  EXPECT_EQ(o.size, 1024u);
  EXPECT_EQ(o.mode, Mode::rate);
  EXPECT_EQ(o.rate_hz, 100.0);
  EXPECT_EQ(o.wait, WaitMode::spin);
  EXPECT_EQ(o.cpu, 1);
}

TEST(Options, BadValuesAreNamed) {
  Options o;
  EXPECT_NE(parse({"run", "--role", "sub", "--mw", "udp", "--size", "0"}, &o).find("'0'"), std::string::npos);
  EXPECT_NE(parse({"run", "--role", "sub", "--mw", "nope", "--size", "64"}, &o).find("'nope'"),
            std::string::npos);
  EXPECT_NE(parse({"run", "--role", "sub", "--mw", "udp", "--size", "70000"}, &o).find("70000"),
            std::string::npos);
  EXPECT_NE(parse({"run", "--role", "sub", "--mw", "udp", "--size", "-5"}, &o).find("'-5'"), std::string::npos);
  EXPECT_NE(parse({"run", "--role", "sub", "--mw", "udp", "--size", "64", "--mode", "rate", "--rate-hz", "0"}, &o)
                .find("'0'"),
            std::string::npos);
  EXPECT_NE(parse({"run", "--role", "sub", "--mw", "udp", "--size", "64", "--rate-hz", "abc"}, &o).find("abc"),
            std::string::npos);
  EXPECT_NE(parse({"run", "--role", "sub", "--mw", "udp", "--size", "64", "--bogus", "1"}, &o).find("bogus"),
            std::string::npos);
  EXPECT_NE(parse({"frobnicate"}, &o).find("frobnicate"), std::string::npos);
}

TEST(Options, RequiredPieces) {
  Options o;
  EXPECT_NE(parse({"run", "--role", "sub", "--mw", "udp", "--size", "64", "--mode", "rate"}, &o), "");
  EXPECT_NE(parse({"run", "--mw", "udp", "--size", "64"}, &o), "");  // no role
  EXPECT_EQ(parse({"list"}, &o), "");
  EXPECT_EQ(parse({"wakeup", "--cpus", "0,1"}, &o), "");
  EXPECT_EQ(o.cpu_b, 1);
}
