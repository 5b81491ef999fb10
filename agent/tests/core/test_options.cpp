#include <gtest/gtest.h>

#include <vector>

#include "core/description.h"
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

TEST(Options, RangesAreChecked) {
  Options o;
  EXPECT_NE(parse({"run", "--role", "pub", "--mw", "udp", "--size", "64", "--mode", "rate", "--rate-hz", "1e30"}, &o)
                .find("1e30"),
            std::string::npos);
  EXPECT_NE(parse({"run", "--role", "pub", "--mw", "udp", "--size", "64", "--duration-ns", "99999999999999999999"}, &o)
                .find("99999999999999999999"),
            std::string::npos);
  EXPECT_NE(parse({"run", "--role", "pub", "--mw", "udp", "--size", "64", "--confidence", "1.5"}, &o).find("1.5"),
            std::string::npos);
  o = Options{};
  EXPECT_EQ(parse({"run", "--role", "sub", "--mw", "udp", "--size", "64", "--clock", "realtime", "--clock-offset-ns",
                   "-3000000000"},
                  &o),
            "");
  EXPECT_EQ(o.clock, StampClock::realtime);
  EXPECT_EQ(o.clock_offset_ns, -3000000000LL);
}

// The one place that refuses what an adapter cannot honour.
TEST(Description, RefusesWhatTheAdapterCannotHonour) {
  Description d;
  d.max_size = 1000;
  d.transports = d.transport = "udp";
  d.reliabilities = d.reliability = "best-effort";
  d.receives = "listener,waitset";
  d.receive = "listener";
  Options o;
  ASSERT_EQ(parse({"run", "--role", "pub", "--mw", "x", "--size", "64"}, &o), "");
  EXPECT_EQ(refuse("x", d, o), "");
  o.size = 1001;
  EXPECT_NE(refuse("x", d, o).find("at most 1000"), std::string::npos);
  o.size = 64;
  o.qos.reliability = "reliable";
  EXPECT_EQ(refuse("x", d, o), "--reliability reliable: not supported by x");
  o.qos.reliability = "";
  o.qos.keep_all = true;
  EXPECT_NE(refuse("x", d, o).find("--history keep-all"), std::string::npos);
  o.qos.keep_all = false;
  o.qos.transport = "shm";
  EXPECT_NE(refuse("x", d, o).find("choose from: udp"), std::string::npos);
  o.qos.transport = "";
  o.wait = WaitMode::spin;
  EXPECT_NE(refuse("x", d, o).find("--wait spin"), std::string::npos);  // the default receive is a listener
  o.qos.receive = "waitset";
  EXPECT_EQ(refuse("x", d, o), "");
}

TEST(Options, Readers) {
  Options o;
  ASSERT_EQ(parse({"run", "--role", "sub", "--mw", "x", "--size", "64", "--readers", "4"}, &o), "");
  EXPECT_EQ(o.readers, 4u);
  o = Options{};
  EXPECT_NE(parse({"run", "--role", "sub", "--mw", "x", "--size", "64", "--readers", "65"}, &o).find("'65'"),
            std::string::npos);
  o = Options{};
  EXPECT_NE(parse({"run", "--role", "sub", "--mw", "x", "--size", "64", "--readers", "0"}, &o).find("'0'"),
            std::string::npos);
  o = Options{};
  EXPECT_NE(parse({"run", "--role", "pub", "--mw", "x", "--size", "64", "--readers", "2"}, &o).find("--readers"),
            std::string::npos);
  o = Options{};  // a fixed port for several readers: one each
  EXPECT_NE(parse({"run", "--role", "sub", "--mw", "x", "--size", "64", "--readers", "2", "--port", "5000"}, &o)
                .find("--port"),
            std::string::npos);
  o = Options{};
  EXPECT_EQ(parse({"run", "--role", "sub", "--mw", "x", "--size", "64", "--readers", "2", "--port", "5000,5001"}, &o),
            "");
}

TEST(Options, EachReadersOptions) {
  Options o;
  ASSERT_EQ(parse({"run", "--role", "sub", "--mw", "x", "--size", "64", "--readers", "3", "--port", "5000,5001,5002",
                   "--echo", "1", "--slow-ns", "5000000", "--samples-out", "dir.d/point-0003.i64"},
                  &o),
            "");
  const std::vector<Options> r = reader_options(o);
  ASSERT_EQ(r.size(), 3u);
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r[i].reader, i);
    EXPECT_EQ(r[i].readers, 3u);
    EXPECT_EQ(r[i].port, uint16_t(5000 + i));
    EXPECT_EQ(adapter_config(r[i]).port, uint16_t(5000 + i));
    EXPECT_EQ(adapter_config(r[i]).ports, std::vector<uint16_t>{uint16_t(5000 + i)});
  }
  EXPECT_TRUE(r[0].echo);  // reader 0 answers pings; the last is the slow one and never echoes
  EXPECT_FALSE(r[2].echo);
  EXPECT_EQ(r[0].slow_ns, 0);
  EXPECT_EQ(r[2].slow_ns, 5000000);
  EXPECT_EQ(r[0].samples_out, "dir.d/point-0003.i64");
  EXPECT_EQ(r[1].samples_out, "dir.d/point-0003.sub1.i64");
  EXPECT_EQ(r[2].samples_out, "dir.d/point-0003.sub2.i64");

  Options one;  // one reader: the options as given, the slow one included
  ASSERT_EQ(parse({"run", "--role", "sub", "--mw", "x", "--size", "64", "--slow-ns", "7", "--samples-out", "dir.d/x"},
                  &one),
            "");
  const std::vector<Options> r1 = reader_options(one);
  ASSERT_EQ(r1.size(), 1u);
  EXPECT_EQ(r1[0].slow_ns, 7);
  EXPECT_EQ(r1[0].samples_out, "dir.d/x");

  Options two;  // a dot in a folder's name is no extension
  ASSERT_EQ(parse({"run", "--role", "sub", "--mw", "x", "--size", "64", "--readers", "2", "--samples-out", "dir.d/x"},
                  &two),
            "");
  EXPECT_EQ(reader_options(two)[1].samples_out, "dir.d/x.sub1");
}

TEST(Description, RefusesMoreReadersThanTheAdapterHoldsInAProcess) {
  Description d;
  d.max_size = 1000;
  d.max_readers_per_process = 1;
  d.readers_note = "one node per process";
  Options o;
  ASSERT_EQ(parse({"run", "--role", "sub", "--mw", "x", "--size", "64", "--readers", "3"}, &o), "");
  EXPECT_EQ(refuse("x", d, o), "--readers 3: not supported by x (at most 1 reader(s) per process: one node per process)");
  o.readers = 1;
  EXPECT_EQ(refuse("x", d, o), "");
  d.max_readers_per_process = 0;  // no limit of its own, but a publisher that serves one
  d.max_subscribers = 1;
  o.readers = 2;
  EXPECT_NE(refuse("x", d, o).find("--readers 2"), std::string::npos);
  d.max_subscribers = 0;
  EXPECT_EQ(refuse("x", d, o), "");
}
