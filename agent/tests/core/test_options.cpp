#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "core/description.h"
#include "core/option_table.h"
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
  EXPECT_EQ(parse({"run",    "--role", "pub",    "--mw",       "udp",        "--mode",    "rate",
                   "--size", "1024",   "--rate", "100",        "--port",     "5000",      "--cpu",
                   "1",      "--wait", "spin",   "--duration", "2000000000", "--samples", "7"},
                  &o),
            "");
  EXPECT_EQ(o.size, 1024u);
  EXPECT_EQ(o.mode, Mode::rate);
  EXPECT_EQ(o.rate_hz, 100.0);
  EXPECT_EQ(o.wait, WaitMode::spin);
  EXPECT_EQ(o.cpu, 1);
  EXPECT_EQ(o.duration_ns, 2000000000);
  EXPECT_EQ(o.samples, 7u);
}

// Every field an option sets starts at the table's default: one source.
TEST(Options, DefaultsComeFromTheTable) {
  Options o;
  EXPECT_EQ(o.duration_ns, 5'000'000'000);
  EXPECT_EQ(o.warmup_ns, 1'000'000'000);
  EXPECT_EQ(o.latency_count, 10000u);
  EXPECT_EQ(o.burst_gap_ns, 10'000'000);
  EXPECT_EQ(o.match_timeout_ns, 10'000'000'000);
  EXPECT_EQ(o.qos.history_depth, 10);
  EXPECT_FALSE(o.qos.keep_all);
  EXPECT_EQ(AdapterConfig{}.history_depth, 10);
  EXPECT_EQ(o.confidence, 0.95);
  EXPECT_EQ(o.host, "127.0.0.1");
  EXPECT_EQ(o.size, 1024u);
  for (const OptionRow& r : option_rows()) {
    if (r.def == nullptr) continue;
    Value v;
    EXPECT_EQ(parse_value(r, r.def, &v), "") << r.name << "'s default " << r.def;
  }
}

TEST(Options, EveryRowIsComplete) {
  std::set<std::string> names;
  for (const OptionRow& r : option_rows()) {
    EXPECT_TRUE(names.insert(std::string(to_string(r.command)) + " " + r.name).second) << r.name << " twice";
    EXPECT_NE(r.set, nullptr) << r.name;
    EXPECT_NE(*r.help, '\0') << r.name << " has no help";
    if (r.point_key) {
      EXPECT_NE(*r.record, '\0') << r.name << " identifies a point but has no record field";
    }
    if (*r.label) {
      EXPECT_EQ(r.group, Group::qos) << r.name;
    }
  }
  for (const LimitRule& l : limit_rules()) EXPECT_NE(find_option(l.option), nullptr) << l.option;
  for (const ConflictRule& c : conflict_rules()) {
    EXPECT_NE(find_option(c.option), nullptr) << c.option;
    EXPECT_NE(find_option(c.other), nullptr) << c.other;
  }
}

TEST(Options, BadValuesAreNamed) {
  Options o;
  EXPECT_NE(parse({"run", "--role", "sub", "--mw", "udp", "--size", "0"}, &o).find("'0'"), std::string::npos);
  o = Options{};
  EXPECT_NE(parse({"run", "--role", "sub", "--mw", "udp", "--size", "-5"}, &o).find("'-5'"), std::string::npos);
  o = Options{};
  EXPECT_NE(
      parse({"run", "--role", "pub", "--mw", "udp", "--size", "64", "--mode", "rate", "--rate", "0"}, &o).find("'0'"),
      std::string::npos);
  o = Options{};
  EXPECT_NE(parse({"run", "--role", "pub", "--mw", "udp", "--size", "64", "--rate", "abc"}, &o).find("abc"),
            std::string::npos);
  o = Options{};
  EXPECT_NE(parse({"run", "--role", "sub", "--mw", "udp", "--size", "64", "--bogus", "1"}, &o).find("bogus"),
            std::string::npos);
  EXPECT_NE(parse({"frobnicate"}, &o).find("frobnicate"), std::string::npos);
  o = Options{};
  EXPECT_NE(parse({"run", "--role", "sub", "--mw", "udp", "--size", "64", "--size", "65"}, &o).find("twice"),
            std::string::npos);
  o = Options{};
  EXPECT_EQ(parse({"run", "--role", "sub", "--mw", "udp", "--history", "keep-last:0"}, &o),
            "--history: 'keep-last:0' is not keep-last:N (N from 1 to 1000000) or keep-all");
  o = Options{};
  EXPECT_EQ(parse({"run", "--role", "sub", "--mw", "udp", "--durability", "sticky"}, &o),
            "--durability: 'sticky' choose from: volatile, transient-local");
}

TEST(Options, RequiredPieces) {
  Options o;
  EXPECT_EQ(parse({"run", "--role", "pub", "--mw", "udp", "--size", "64", "--mode", "rate"}, &o),
            "--rate: missing (required with --mode rate)");
  o = Options{};
  EXPECT_EQ(parse({"run", "--mw", "udp", "--size", "64"}, &o), "--role: missing");
  EXPECT_EQ(parse({"list"}, &o), "");
  EXPECT_NE(parse({"list", "--size", "64"}, &o).find("unknown option"), std::string::npos);
  o = Options{};
  EXPECT_EQ(parse({"wakeup", "--cpus", "0,1"}, &o), "");
  EXPECT_EQ(o.cpu_b, 1);
  o = Options{};
  EXPECT_NE(parse({"wakeup", "--cpus", "0"}, &o).find("'0'"), std::string::npos);
}

// One name, two commands: each row its own range and default (floor's cores
// may be -1, unpinned; the wake-up probe's may not), and a command takes only its own.
TEST(Options, EachCommandItsOwnRows) {
  Options o;
  EXPECT_EQ(parse({"wakeup", "--cpus", "-1,1"}, &o),
            "--cpus: '-1,1' must be 2 comma-separated whole numbers from 0 to 4095");
  o = Options{};
  EXPECT_EQ(parse({"floor", "--sizes", "64", "--cpus", "-1,1"}, &o), "");
  EXPECT_EQ(o.floor.cpu_a, -1);
  EXPECT_EQ(o.floor.cpu_b, 1);
  EXPECT_EQ(o.cpu_a, 0);                    // the wake-up probe's default, untouched
  EXPECT_EQ(find_option("cpus"), nullptr);  // not an option of run
  EXPECT_EQ(find_option("cpus", Command::wakeup)->def, std::string("0,1"));
  EXPECT_EQ(find_option("wait", Command::floor)->capability, std::string(""));
  EXPECT_EQ(find_option("wait")->capability, std::string("wait"));
  o = Options{};
  EXPECT_EQ(parse({"wakeup", "--sizes", "64"}, &o), "--sizes: unknown option");
  EXPECT_EQ(parse({"version", "--sizes", "64"}, &o), "--sizes: unknown option (version takes none)");
}

// An option given where it does not apply is refused, not ignored.
TEST(Options, ModesAndRoles) {
  Options o;
  EXPECT_EQ(parse({"run", "--role", "pub", "--mw", "udp", "--mode", "latency", "--rate", "100"}, &o),
            "--rate: only with --mode rate");
  o = Options{};
  EXPECT_EQ(parse({"run", "--role", "sub", "--mw", "udp", "--mode", "rate", "--duration", "100"}, &o),
            "--duration: only for --role pub");
  o = Options{};
  EXPECT_EQ(parse({"run", "--role", "pub", "--mw", "udp", "--mode", "throughput", "--latency-count", "0"}, &o), "");
  EXPECT_EQ(o.latency_count, 0u);
}

TEST(Options, RangesAreChecked) {
  Options o;
  EXPECT_NE(parse({"run", "--role", "pub", "--mw", "udp", "--size", "64", "--mode", "rate", "--rate", "1e30"}, &o)
                .find("1e30"),
            std::string::npos);
  o = Options{};
  EXPECT_NE(parse({"run", "--role", "pub", "--mw", "udp", "--size", "64", "--duration", "99999999999999999999"}, &o)
                .find("99999999999999999999"),
            std::string::npos);
  o = Options{};
  EXPECT_NE(parse({"run", "--role", "pub", "--mw", "udp", "--size", "64", "--confidence", "0.97"}, &o)
                .find("choose from: 0.90, 0.95, 0.99"),
            std::string::npos);
  o = Options{};
  EXPECT_EQ(parse({"run", "--role", "sub", "--mw", "udp", "--size", "64", "--clock", "realtime", "--clock-offset",
                   "-3000000000"},
                  &o),
            "");
  EXPECT_EQ(o.clock, StampClock::realtime);
  EXPECT_EQ(o.clock_offset_ns, -3000000000LL);
}

// The one place that refuses what an adapter cannot honour: the rows' capabilities.
TEST(Description, RefusesWhatTheAdapterCannotHonour) {
  Description d;
  d.max_size = 2000;
  d.transports = d.transport = "udp";
  d.reliabilities = d.reliability = "best-effort";
  d.receives = "listener,waitset";
  d.receive = "listener";
  auto refused = [&](std::vector<const char*> extra) {
    Options o;
    std::vector<const char*> args = {"run", "--role", "pub", "--mw", "x"};
    args.insert(args.end(), extra.begin(), extra.end());
    EXPECT_EQ(parse(args, &o), "");
    settle(&o, d);
    return refuse("x", d, o);
  };
  EXPECT_EQ(refused({"--size", "64"}), "");
  EXPECT_EQ(refused({"--size", "2001"}), "--size 2001: x carries at most 2000 bytes per message");
  EXPECT_EQ(refused({"--reliability", "reliable"}),
            "--reliability reliable: not supported by x (choose from: best-effort)");
  EXPECT_EQ(refused({"--history", "keep-all"}), "--history keep-all: not supported by x (no history QoS)");
  EXPECT_EQ(refused({"--history", "keep-last:10"}), "");  // the default asks for nothing
  EXPECT_EQ(refused({"--batch", "1"}), "--batch 1: not supported by x (no write batching)");
  EXPECT_EQ(refused({"--batch", "0"}), "");
  EXPECT_EQ(refused({"--transport", "shm"}), "--transport shm: not supported by x (choose from: udp)");
  EXPECT_EQ(refused({"--whc-high", "65536"}), "--whc-high 65536: not supported by x (no writer history cache limit)");
  d.honours = "whc";
  EXPECT_EQ(refused({"--whc-high", "65536"}), "");
  // Spinning polls: the listener default gives way to the first way that can be polled.
  EXPECT_EQ(refused({"--wait", "spin"}), "");
  EXPECT_NE(refused({"--wait", "spin", "--receive", "listener"}).find("not with --receive listener"),
            std::string::npos);
  d.spin = false;
  EXPECT_EQ(refused({"--wait", "spin"}), "--wait spin: not supported by x (choose from: block)");
}

TEST(Options, SubscribersAsThreads) {
  Options o;
  ASSERT_EQ(parse({"run", "--role", "sub", "--mw", "x", "--subscribers", "4", "--subscribers-as", "threads"}, &o), "");
  EXPECT_EQ(reader_options(o).size(), 4u);
  o = Options{};
  EXPECT_NE(parse({"run", "--role", "sub", "--mw", "x", "--subscribers", "65"}, &o).find("'65'"), std::string::npos);
  o = Options{};
  EXPECT_EQ(parse({"run", "--role", "pub", "--mw", "x", "--subscribers", "2", "--subscribers-as", "threads"}, &o),
            "--subscribers-as: only for --role sub");
  o = Options{};  // a fixed port for several readers: one each
  EXPECT_NE(parse({"run", "--role", "sub", "--mw", "x", "--subscribers", "2", "--subscribers-as", "threads", "--port",
                   "5000"},
                  &o)
                .find("--port"),
            std::string::npos);
  o = Options{};
  EXPECT_EQ(parse({"run", "--role", "sub", "--mw", "x", "--subscribers", "2", "--subscribers-as", "threads", "--port",
                   "5000,5001"},
                  &o),
            "");
  o = Options{};
  EXPECT_NE(parse({"run", "--role", "sub", "--mw", "x", "--subscribers", "2", "--subscriber-index", "2"}, &o)
                .find("below --subscribers 2"),
            std::string::npos);
}

TEST(Options, EachReadersOptions) {
  Options o;
  ASSERT_EQ(parse({"run", "--role", "sub", "--mw", "x", "--subscribers", "3", "--subscribers-as", "threads", "--port",
                   "5000,5001,5002", "--slow-subscriber", "5000000", "--samples-out", "dir.d/point-0003.i64"},
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
  EXPECT_TRUE(r[0].echo);  // subscriber 0 answers pings; the last is the slow one and never echoes
  EXPECT_FALSE(r[2].echo);
  EXPECT_EQ(r[0].slow_ns, 0);
  EXPECT_EQ(r[2].slow_ns, 5000000);
  EXPECT_EQ(r[0].samples_out, "dir.d/point-0003.i64");
  EXPECT_EQ(r[1].samples_out, "dir.d/point-0003.sub1.i64");
  EXPECT_EQ(r[2].samples_out, "dir.d/point-0003.sub2.i64");

  // As processes: the same rules by --subscriber-index.
  for (uint32_t index = 0; index < 3; ++index) {
    Options p;
    const std::string i = std::to_string(index);
    ASSERT_EQ(parse({"run", "--role", "sub", "--mw", "x", "--subscribers", "3", "--subscriber-index", i.c_str(),
                     "--slow-subscriber", "7", "--samples-out", "dir.d/x.i64"},
                    &p),
              "");
    const std::vector<Options> one = reader_options(p);
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(one[0].echo, index == 0);
    EXPECT_EQ(one[0].slow_ns, index == 2 ? 7 : 0);
    EXPECT_EQ(one[0].samples_out, index == 0 ? "dir.d/x.i64" : "dir.d/x.sub" + i + ".i64");
  }

  Options alone;  // one subscriber: the slow one, and the echoer
  ASSERT_EQ(parse({"run", "--role", "sub", "--mw", "x", "--slow-subscriber", "7"}, &alone), "");
  EXPECT_EQ(reader_options(alone)[0].slow_ns, 7);
  EXPECT_TRUE(reader_options(alone)[0].echo);

  Options two;  // a dot in a folder's name is no extension
  ASSERT_EQ(parse({"run", "--role", "sub", "--mw", "x", "--subscribers", "2", "--subscribers-as", "threads",
                   "--samples-out", "dir.d/x"},
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
  ASSERT_EQ(
      parse({"run", "--role", "sub", "--mw", "x", "--size", "64", "--subscribers", "3", "--subscribers-as", "threads"},
            &o),
      "");
  EXPECT_EQ(refuse("x", d, o),
            "--subscribers 3: x holds at most 1 reader(s) per process (--subscribers-as processes has no such limit): "
            "one node per process");
  Options p;  // as processes: no such limit
  ASSERT_EQ(parse({"run", "--role", "sub", "--mw", "x", "--size", "64", "--subscribers", "3"}, &p), "");
  EXPECT_EQ(refuse("x", d, p), "");
  d.max_readers_per_process = 0;  // no limit of its own, but a publisher that serves one
  d.max_subscribers = 1;
  EXPECT_EQ(refuse("x", d, p), "--subscribers 3: x serves at most 1 subscriber(s) per publisher");
}

TEST(OptionTable, PublishedAsJson) {
  const std::string event = options_event();
  EXPECT_EQ(event.rfind("{\"event\":\"options\",\"options\":[", 0), 0u);
  for (const OptionRow& r : option_rows())
    EXPECT_NE(event.find(std::string("{\"name\":\"") + r.name + "\""), std::string::npos) << r.name;
  EXPECT_NE(event.find("\"name\":\"history\",\"kind\":\"history\""), std::string::npos);
  EXPECT_NE(event.find("\"record\":\"qos.batch\""), std::string::npos);
}

// `discover`: its own rows (N from 2, T from 1, a profile of the three), its
// defaults, and what it needs.
TEST(Options, DiscoverRows) {
  Options o;
  EXPECT_EQ(parse({"discover", "--mw", "cyclonedds", "--participants", "5", "--index", "4"}, &o), "");
  EXPECT_EQ(o.discovery.participants, 5u);
  EXPECT_EQ(o.discovery.index, 4u);
  EXPECT_EQ(o.discovery.topics, 1u);
  EXPECT_EQ(o.discovery.profile, "unicast");
  EXPECT_EQ(o.discovery.nic, "lo");
  EXPECT_EQ(o.discovery.timeout_ns, 60'000'000'000);
  EXPECT_FALSE(o.discovery.threads);
  EXPECT_EQ(o.discovery.hosted, 1u);
  EXPECT_EQ(o.discovery.stride, 1u);
  o = Options{};
  EXPECT_EQ(parse({"discover", "--mw", "x", "--participants", "9", "--index", "1", "--participants-as", "threads",
                   "--hosted", "4", "--stride", "2"},
                  &o),
            "");
  EXPECT_TRUE(o.discovery.threads);
  EXPECT_EQ(o.discovery.hosted, 4u);
  EXPECT_EQ(o.discovery.stride, 2u);
  o = Options{};
  EXPECT_EQ(parse({"discover", "--mw", "x", "--participants", "1", "--index", "0"}, &o),
            "--participants: '1' must be a whole number from 2 to 1000");
  o = Options{};
  EXPECT_NE(parse({"discover", "--mw", "x", "--participants", "2", "--index", "0", "--discovery", "gossip"}, &o)
                .find("--discovery: 'gossip'"),
            std::string::npos);
  o = Options{};
  EXPECT_NE(parse({"discover", "--mw", "x", "--participants", "2"}, &o).find("--index"), std::string::npos);
  o = Options{};
  EXPECT_EQ(parse({"discover", "--mw", "x", "--participants", "2", "--index", "0", "--size", "64"}, &o),
            "--size: unknown option");
}
