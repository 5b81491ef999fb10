#include "core/option_table.h"

#include "core/header.h"
#include "core/options.h"
#include "core/security.h"

namespace mwperf {
namespace {

constexpr unsigned kLatency = 1u << unsigned(Mode::latency), kThroughput = 1u << unsigned(Mode::throughput),
                   kRate = 1u << unsigned(Mode::rate), kBurst = 1u << unsigned(Mode::burst);
constexpr double kMaxNs = double(kMaxDurationNs);
constexpr double kSecond = 1e9;

// The table reads as a table: one row's builder calls on as few lines as they fit.
// clang-format off
std::vector<OptionRow> make_rows() {
  using K = Kind;
  using G = Group;
  return {
      // -- what is measured ------------------------------------------------
      OptionRow("role", K::choice, G::control).among("pub,sub").needed()
          .says("this side of the point").sets([](Options& o, const Value& v) {
            o.role = v.s == "pub" ? Role::pub : Role::sub;
          }),
      OptionRow("mw", K::text, G::point).needed().key("mw")
          .says("the middleware (an adapter of `mwperf-agent list`)")
          .sets([](Options& o, const Value& v) { o.mw = v.s; }),
      OptionRow("peer-mw", K::text, G::point).gated("rtps", "it does not speak RTPS, DDS's wire protocol")
          .for_roles(kPub).key("peer_mw")
          .says("cross-vendor: the subscriber's (and the echo's) middleware, another adapter that speaks RTPS, on the "
                "same topic, type and QoS (default: --mw's)")
          .sets([](Options& o, const Value& v) { o.peer_mw = v.s; }),
      OptionRow("mode", K::choice, G::point).among("latency,throughput,rate,burst").by_default("latency").key("mode")
          .says("latency: ping-pong; throughput: flat out, a ping every latency-count samples; rate: at --rate on "
                "deadlines; burst: --demand samples back to back, then --burst-gap")
          .sets([](Options& o, const Value& v) {
            o.mode = v.s == "throughput" ? Mode::throughput : v.s == "rate" ? Mode::rate
                     : v.s == "burst" ? Mode::burst : Mode::latency;
          }),
      OptionRow("size", K::bytes, G::point).range(double(kHeaderSize), double(1 << 30)).by_default("1024").key("size")
          .per_point().says("the whole message handed to the middleware, the 32-byte mwperf header included")
          .sets([](Options& o, const Value& v) { o.size = size_t(v.u); }),
      OptionRow("rate", K::hz, G::point).range(1e-6, kMaxRateHz).in_modes(kRate).for_roles(kPub).needed()
          .key("rate_hz").per_point().says("publish rate, on absolute deadlines")
          .sets([](Options& o, const Value& v) { o.rate_hz = v.d; }),
      OptionRow("latency-count", K::count, G::point).range(0, 1e12).by_default("10000").in_modes(kThroughput)
          .for_roles(kPub).key("latency_count").per_point().says("one latency ping every N samples (0: none)")
          .sets([](Options& o, const Value& v) { o.latency_count = v.u; }),
      OptionRow("demand", K::count, G::point).range(1, 1e7).in_modes(kBurst).for_roles(kPub).needed().key("demand")
          .per_point().says("samples per burst, written back to back")
          .sets([](Options& o, const Value& v) { o.demand = v.u; }),
      OptionRow("burst-gap", K::ns, G::point).range(0, 3600 * kSecond).by_default("10000000").in_modes(kBurst)
          .for_roles(kPub).key("burst_gap_s").per_point().says("the pause after each burst")
          .sets([](Options& o, const Value& v) { o.burst_gap_ns = v.i; }),
      OptionRow("subscribers", K::count, G::point).range(1, kMaxReaders).by_default("1").key("subscribers")
          .says("1:N fan-out: the publisher serves N subscribers; the first answers pings, the others listen")
          .sets([](Options& o, const Value& v) { o.subscribers = uint32_t(v.u); }),
      OptionRow("subscribers-as", K::choice, G::point).among("processes,threads").by_default("processes")
          .for_roles(kSub).key("subscribers_as")
          .says("the N subscribers as N processes (one agent each, --subscriber-index) or as N reader threads of "
                "this one process, each its own middleware instance")
          .sets([](Options& o, const Value& v) { o.subscribers_as_threads = v.s == "threads"; }),
      OptionRow("slow-subscriber", K::ns, G::point).range(0, 10 * kSecond).by_default("0").for_roles(kSub)
          .key("slow_subscriber_s").per_point().says("the last subscriber (never the echoer) takes this long over each sample")
          .sets([](Options& o, const Value& v) { o.slow_ns = v.i; }),
      // -- how it is measured ----------------------------------------------
      OptionRow("duration", K::ns, G::measure).range(1, kMaxNs).by_default("5000000000").for_roles(kPub)
          .key("duration_s").per_point().says("the measured phase (the maximum with --samples or --precision)")
          .sets([](Options& o, const Value& v) { o.duration_ns = v.i; }),
      OptionRow("warmup", K::ns, G::measure).range(0, kMaxNs).by_default("1000000000").for_roles(kPub)
          .key("warmup_s").per_point().says("before the measured phase; its samples are flagged and never counted")
          .sets([](Options& o, const Value& v) { o.warmup_ns = v.i; }),
      OptionRow("samples", K::count, G::measure).range(1, double(1ULL << 40)).for_roles(kPub).key("samples")
          .per_point().says("end the measured phase after N samples (--duration is then the maximum)")
          .sets([](Options& o, const Value& v) { o.samples = v.u; }),
      OptionRow("precision", K::fraction, G::measure).range(1e-4, 0.9999).key("precision")
          .per_point().says("adaptive stop: once the intervals of p50 and p99 are within this share of their estimate "
                "(--duration is then the maximum)")
          .sets([](Options& o, const Value& v) { o.precision = v.d; }),
      OptionRow("stop-loss", K::fraction, G::measure).range(1e-6, 0.9999).in_modes(kRate).for_roles(kSub)
          .key("stop_loss").per_point().says("adaptive stop of a rate point judged on its loss: once the loss's "
                "interval lies below or above this share (with --precision, and p50 and p99 within it; --duration "
                "is then the maximum)")
          .sets([](Options& o, const Value& v) { o.stop_loss = v.d; }),
      OptionRow("confidence", K::fraction, G::measure).range(0.9, 0.99).among("0.90,0.95,0.99").by_default("0.95")
          .key("confidence").per_point().says("of every interval reported and of the adaptive stop")
          .sets([](Options& o, const Value& v) { o.confidence = v.d; }),
      OptionRow("wait", K::choice, G::measure).among("block,spin").by_default("block")
          .gated("wait", "it cannot be polled").key("wait")
          .says("the receiver blocks in the middleware's receive call, or polls it")
          .sets([](Options& o, const Value& v) { o.wait = v.s == "spin" ? WaitMode::spin : WaitMode::block; }),
      OptionRow("clock", K::choice, G::measure).among("monotonic,realtime").by_default("monotonic").key("stamp_clock")
          .says("the clock one-way latency is stamped on (realtime: hosts synchronised by PTP or chrony)")
          .sets([](Options& o, const Value& v) {
            o.clock = v.s == "realtime" ? StampClock::realtime : StampClock::monotonic;
          }),
      OptionRow("match-timeout", K::ns, G::measure).range(0, 3600 * kSecond).by_default("10000000000")
          .per_point().says("how long the sides wait for each other (discovery), and the publisher for `go`")
          .sets([](Options& o, const Value& v) { o.match_timeout_ns = v.i; }),
      // -- the middleware's QoS (a point's QoS label, in this order) ------------
      OptionRow("reliability", K::choice, G::qos).among("reliable,best-effort").gated("reliability", "")
          .key("reliability").labelled("{}").says("the middleware's reliability (default: its own)")
          .sets([](Options& o, const Value& v) { o.qos.reliability = v.s; }),
      OptionRow("history", K::history, G::qos).range(1, kMaxHistoryDepth).by_default("keep-last:10")
          .gated("history", "no history QoS").key("qos.history").labelled("{}", true)
          .says("keep-last:N or keep-all")
          .sets([](Options& o, const Value& v) {
            o.qos.keep_all = v.u == 0;
            o.qos.history_depth = int(v.u);
          }),
      OptionRow("durability", K::choice, G::qos).among("volatile,transient-local").by_default("volatile")
          .gated("durability", "no durability QoS").key("qos.durability").labelled("{}")
          .says("whether a late reader gets what was written before it matched")
          .sets([](Options& o, const Value& v) { o.qos.durability = v.s; }),
      OptionRow("instances", K::count, G::qos).range(0, kMaxInstances).by_default("0")
          .gated("keyed", "no keyed topics").key("qos.instances").labelled("keyed {}")
          .says("a keyed topic of N instances, written round-robin (0: unkeyed)")
          .sets([](Options& o, const Value& v) { o.qos.instances = uint32_t(v.u); }),
      OptionRow("async", K::flag, G::qos).by_default("0").gated("async", "no asynchronous publishing")
          .key("qos.async").labelled("async").says("asynchronous publishing")
          .sets([](Options& o, const Value& v) { o.qos.async = v.b; }),
      OptionRow("batch", K::flag, G::qos).by_default("0").gated("batch", "no write batching").key("qos.batch")
          .labelled("batch")
          .says("write batching: flat-out samples share packets (pings, echoes and rate-mode samples are flushed "
                "at once)")
          .sets([](Options& o, const Value& v) { o.qos.batch = v.b; }),
      OptionRow("congestion", K::choice, G::qos).among("block,drop").by_default("block")
          .gated("congestion", "no congestion control to choose").key("qos.congestion")
          .labelled("congestion {}").says("what a full queue does to the writer: wait, or drop the sample")
          .sets([](Options& o, const Value& v) { o.qos.congestion = v.s; }),
      OptionRow("whc-high", K::bytes, G::qos).range(1024, double(1 << 30)).gated("whc", "no writer history cache limit")
          .key("qos.whc_high").labelled("whc-high {}")
          .says("the high-water mark of a writer's history cache: a reliable writer waits while this many bytes "
                "are unacknowledged (default: the middleware's own)")
          .sets([](Options& o, const Value& v) { o.qos.whc_high = v.u; }),
      OptionRow("receive", K::choice, G::qos).gated("receive", "").key("qos.receive").labelled("{}")
          .says("how the middleware hands data over (listener: on its own thread; waitset: to the agent's)")
          .sets([](Options& o, const Value& v) { o.qos.receive = v.s; }),
      OptionRow("nic", K::text, G::qos).gated("nic", "raw sockets always use loopback").key("qos.nic")
          .labelled("nic {}").says("the network interface of the middleware's traffic (default: lo)")
          .sets([](Options& o, const Value& v) { o.qos.nic = v.s; }),
      OptionRow("transport", K::choice, G::qos).gated("transport", "").key("transport").labelled("{}")
          .says("the middleware's transport (default: its own)")
          .sets([](Options& o, const Value& v) { o.qos.transport = v.s; }),
      OptionRow("security", K::choice, G::qos).among(kSecurityLevels).by_default("none")
          .gated("security", "no DDS Security").key("qos.security").labelled("security {}")
          .says("DDS Security: auth (authentication and access control, data in clear), sign (discovery and every "
                "submessage of the point signed, AES-GMAC), encrypt (the same encrypted, AES-GCM); the keys and "
                "signed documents are mwperf's own, made for the run, or --keystore's")
          .sets([](Options& o, const Value& v) { o.qos.security = v.s; }),
      // -- set by the controller for one side -------------------------------------
      OptionRow("subscriber-index", K::count, G::control).range(0, kMaxReaders - 1).by_default("0").for_roles(kSub)
          .says("which of the --subscribers processes this is: 0 answers pings, the last is the slow one")
          .sets([](Options& o, const Value& v) { o.subscriber_index = uint32_t(v.u); }),
      OptionRow("payload", K::text, G::control).by_default("pattern")
          .per_point().says("what every message's body holds: pattern (byte i = i mod 256), zeros, random (incompressible), or "
                "file:PATH cut into size-32-byte chunks sent in turn (a scenario's flows; a point's is the pattern)")
          .sets([](Options& o, const Value& v) { o.payload = v.s; }),
      OptionRow("publishers", K::count, G::control).range(1, kMaxPublishers).by_default("1").for_roles(kSub)
          .says("the topic's publishers (N:M): publisher p's sequence numbers start at --seq-start + p * 2^48; "
                "loss and order are counted per publisher, `stop S0,S1,...` gives each one's count")
          .sets([](Options& o, const Value& v) { o.publishers = uint32_t(v.u); }),
      OptionRow("check-payload", K::flag, G::control).by_default("0").for_roles(kSub)
          .says("compare every measured sample's body with what --payload sends (a memcmp on the receive path: "
                "for tests, not for measuring)")
          .sets([](Options& o, const Value& v) { o.check_payload = v.b; }),
      OptionRow("host", K::text, G::control).by_default("127.0.0.1")
          .says("the subscriber's address (pub), the address to bind (sub)")
          .sets([](Options& o, const Value& v) { o.host = v.s; }),
      OptionRow("port", K::list, G::control).range(0, 65535).items(1, kMaxReaders).by_default("0")
          .says("sub: 0 = an ephemeral port, or one per reader; pub: every subscriber's")
          .sets([](Options& o, const Value& v) {
            o.ports.clear();
            for (const Value& port : v.list) o.ports.push_back(uint16_t(port.u));
            o.port = o.ports.front();
          }),
      OptionRow("peer", K::text, G::control).by_default("127.0.0.1").says("the other side's address (discovery)")
          .sets([](Options& o, const Value& v) { o.qos.peer = v.s; }),
      OptionRow("isolated", K::flag, G::control).by_default("0")
          .says("a network namespace whose only ways out are lo and the link")
          .sets([](Options& o, const Value& v) { o.qos.isolated = v.b; }),
      OptionRow("enclave", K::text, G::control)
          .says("the DDS Security enclave of this side (--security): a folder of SROS2's files (identity_ca.cert.pem, "
                "cert.pem, key.pem, permissions_ca.cert.pem, governance.p7s, permissions.p7s)")
          .sets([](Options& o, const Value& v) { o.qos.enclave = v.s; }),
      OptionRow("domain", K::count, G::control).range(0, 232).by_default("0").says("the DDS domain id")
          .sets([](Options& o, const Value& v) { o.qos.domain = uint32_t(v.u); }),
      OptionRow("cpu", K::integer, G::control).range(-1, 4095).by_default("-1").says("the core to pin to (-1: none)")
          .sets([](Options& o, const Value& v) { o.cpu = int(v.i); }),
      OptionRow("run-id", K::count, G::control).range(0, 4294967295.0)
          .says("the run id every message carries (default: $MWPERF_RUN_ID)")
          .sets([](Options& o, const Value& v) { o.run_id = uint32_t(v.u); }),
      OptionRow("key", K::choice, G::control).among("stdin")
          .says("the key of every message's tag comes as the first line on stdin (`key <32 hex digits>`), never on "
                "the command line (without it: derived from the run id)")
          .sets([](Options& o, const Value&) { o.key_from_stdin = true; }),
      OptionRow("seq-start", K::count, G::control).range(0, 18446744073709551615.0).by_default("0")
          .says("the first sequence number")
          .sets([](Options& o, const Value& v) { o.seq_start = v.u; }),
      OptionRow("reuse", K::bytes, G::control).range(0, double(1 << 30)).by_default("0")
          .says("keep this agent for consecutive points of one middleware, QoS, placement and transport (an agent "
                "pair): the middleware is opened for messages of up to this many bytes; after each result the agent "
                "waits for `next ARGS` (the next point's options of the rows marked pair, --size at most this) or "
                "`close`; point i of the pair numbers its samples from --seq-start + i * 2^40 (0: one point)")
          .sets([](Options& o, const Value& v) { o.reuse = v.u; }),
      OptionRow("samples-out", K::text, G::control)
          .per_point().says("file for the headline latency samples (little-endian int64 ns); subscriber i > 0 adds .sub<i>")
          .sets([](Options& o, const Value& v) { o.samples_out = v.s; }),
      OptionRow("samples-max", K::count, G::control).range(0, double(1 << 24)).by_default("16384")
          .per_point().says("at most this many samples in that file, evenly strided over the run")
          .sets([](Options& o, const Value& v) { o.samples_max = size_t(v.u); }),
      OptionRow("ping-timeout", K::ns, G::control).range(0, kMaxNs).by_default("1000000000").for_roles(kPub)
          .per_point().says("a ping whose pong has not come back by then is lost")
          .sets([](Options& o, const Value& v) { o.ping_timeout_ns = v.i; }),
      OptionRow("drain", K::ns, G::control).range(0, kMaxNs).for_roles(kSub)
          .per_point().says("after the stop, how long the data path may be quiet before what is missing counts as lost "
                "(default: 4 s under reliable QoS, 0.5 s best effort)")
          .sets([](Options& o, const Value& v) { o.drain_ns = v.i; }),
      OptionRow("stamp-slack", K::ns, G::control).range(0, kMaxNs).by_default("10000000000").for_roles(kSub)
          .per_point().says("how far a send stamp may lie outside [this side's start, now] and belong to the run")
          .sets([](Options& o, const Value& v) { o.stamp_slack_ns = v.i; }),
      OptionRow("clock-offset", K::ns, G::control).range(-kMaxNs, kMaxNs).by_default("0").for_roles(kSub)
          .per_point().says("subtracted from every one-way latency (the other host's clock offset)")
          .sets([](Options& o, const Value& v) { o.clock_offset_ns = v.i; }),
      // -- the wake-up probe (`wakeup`) ------------------------------------------
      OptionRow("cpus", K::list, G::control).each(K::integer).range(0, 4095).items(2, 2).by_default("0,1")
          .of(Command::wakeup).says("the two cores A,B")
          .sets([](Options& o, const Value& v) {
            o.cpu_a = int(v.list[0].i);
            o.cpu_b = int(v.list[1].i);
          }),
      OptionRow("iterations", K::count, G::control).range(1, 1e7).by_default("20000").of(Command::wakeup)
          .says("round trips measured").sets([](Options& o, const Value& v) { o.iterations = int(v.u); }),
      // -- the floor (`floor`, core/floor.h) --------------------------------------
      OptionRow("sizes", K::list, G::point).each(K::bytes).range(1, double(kFloorMaxSize)).items(1, 256)
          .of(Command::floor).needed().says("the message sizes to measure")
          .sets([](Options& o, const Value& v) {
            o.floor.sizes.clear();
            for (const Value& size : v.list) o.floor.sizes.push_back(size_t(size.u));
          }),
      OptionRow("kinds", K::list, G::point).each(K::choice).among(kFloorKinds).items(1, 4).by_default(kFloorKinds)
          .of(Command::floor)
          .says("memcpy: bytes per second copying a message; unix, udp, shm: a ping-pong over a Unix socket pair, "
                "UDP on 127.0.0.1, shared memory")
          .sets([](Options& o, const Value& v) {
            o.floor.kinds.clear();
            for (const Value& kind : v.list) o.floor.kinds.push_back(kind.s);
          }),
      OptionRow("cpus", K::list, G::point).each(K::integer).range(-1, 4095).items(2, 2).by_default("-1,-1")
          .of(Command::floor).says("the publisher's and the subscriber's cores A,B (-1: unpinned)")
          .sets([](Options& o, const Value& v) {
            o.floor.cpu_a = int(v.list[0].i);
            o.floor.cpu_b = int(v.list[1].i);
          }),
      OptionRow("wait", K::choice, G::measure).among("block,spin").by_default("block").of(Command::floor)
          .says("both ends wait in blocking calls or on a futex (block), or poll and spin (spin)")
          .sets([](Options& o, const Value& v) { o.floor.wait = v.s == "spin" ? WaitMode::spin : WaitMode::block; }),
      OptionRow("budget", K::ns, G::measure).range(1e6, 600 * kSecond).by_default("100000000").of(Command::floor)
          .says("each measurement (one kind at one size), a tenth of it warm-up")
          .sets([](Options& o, const Value& v) { o.floor.budget_ns = v.i; }),
      OptionRow("timeout", K::ns, G::measure).range(1e6, 600 * kSecond).by_default("1000000000").of(Command::floor)
          .says("an answer later than this: the peer counts as gone and the measurement fails with that reason")
          .sets([](Options& o, const Value& v) { o.floor.timeout_ns = v.i; }),
      OptionRow("iterations", K::count, G::measure).range(1, 1e8).by_default("100000").of(Command::floor)
          .says("each measurement: at most this many timed samples")
          .sets([](Options& o, const Value& v) { o.floor.iterations = v.u; }),
      // -- discovery (`discover`, core/discovery.h) ---------------------------
      OptionRow("mw", K::text, G::point).needed().of(Command::discover)
          .says("the middleware (an adapter of `mwperf-agent list` with a discovery mode)")
          .sets([](Options& o, const Value& v) { o.mw = v.s; }),
      OptionRow("participants", K::count, G::point).range(2, 1000).needed().of(Command::discover)
          .says("N: the participants of the point, this one included")
          .sets([](Options& o, const Value& v) { o.discovery.participants = uint32_t(v.u); }),
      OptionRow("topics", K::count, G::point).range(1, 1000).by_default("1").of(Command::discover)
          .says("T: the topics, each with one writer and one reader of every participant")
          .sets([](Options& o, const Value& v) { o.discovery.topics = uint32_t(v.u); }),
      OptionRow("participants-as", K::choice, G::point).among("processes,threads").by_default("processes")
          .of(Command::discover)
          .says("the N participants as N processes (one agent each), or as threads of one agent per side (each its "
                "own participant of the middleware; CPU and RSS are the process's, shared out)")
          .sets([](Options& o, const Value& v) { o.discovery.threads = v.s == "threads"; }),
      OptionRow("index", K::count, G::control).range(0, 999).needed().of(Command::discover)
          .says("this participant's place, 0 to N-1 (the index its samples carry; with --hosted, the first's)")
          .sets([](Options& o, const Value& v) { o.discovery.index = uint32_t(v.u); }),
      OptionRow("hosted", K::count, G::control).range(1, 1000).by_default("1").of(Command::discover)
          .says("threads: the participants this process hosts, --index and each --stride after it")
          .sets([](Options& o, const Value& v) { o.discovery.hosted = uint32_t(v.u); }),
      OptionRow("stride", K::count, G::control).range(1, 1000).by_default("1").of(Command::discover)
          .says("threads: the step between the indices of the participants this process hosts")
          .sets([](Options& o, const Value& v) { o.discovery.stride = uint32_t(v.u); }),
      OptionRow("discovery", K::choice, G::point).among(kDiscoveryProfiles).by_default("unicast")
          .of(Command::discover).gated("discovery", "no discovery participant in this agent")
          .says("unicast: loopback only, the others named as unicast peers; default: the middleware's own "
                "defaults (multicast) on --nic; tuned: its scalable settings")
          .sets([](Options& o, const Value& v) { o.discovery.profile = v.s; }),
      OptionRow("nic", K::text, G::control).by_default("lo").of(Command::discover)
          .says("the interface discovery runs on")
          .sets([](Options& o, const Value& v) { o.discovery.nic = v.s; }),
      OptionRow("peer", K::text, G::control).by_default("127.0.0.1").of(Command::discover)
          .says("unicast: the other participants' address")
          .sets([](Options& o, const Value& v) { o.discovery.peer = v.s; }),
      OptionRow("server", K::text, G::control).by_default("127.0.0.1").of(Command::discover)
          .says("tuned, where it is a discovery server (Fast DDS): participant 0's address, where it serves")
          .sets([](Options& o, const Value& v) { o.discovery.server = v.s; }),
      OptionRow("domain", K::count, G::control).range(0, 232).by_default("0").of(Command::discover)
          .says("the DDS domain id")
          .sets([](Options& o, const Value& v) { o.discovery.domain = uint32_t(v.u); }),
      OptionRow("timeout", K::ns, G::measure).range(1e6, 3600 * kSecond).by_default("60000000000")
          .of(Command::discover).says("from `go`: a participant not complete by then reports what it reached")
          .sets([](Options& o, const Value& v) { o.discovery.timeout_ns = v.i; }),
  };
}
// clang-format on

}  // namespace

const std::vector<OptionRow>& option_rows() {
  static const std::vector<OptionRow> rows = make_rows();
  return rows;
}

const std::vector<LimitRule>& limit_rules() {
  static const std::vector<LimitRule> rules = {
      {"size", "max_size", "", "", "carries at most {limit} bytes per message"},
      {"reuse", "max_size", "", "",
       "carries at most {limit} bytes per message (its agent pair cannot be opened for more)"},
      {"subscribers", "max_subscribers", "", "", "serves at most {limit} subscriber(s) per publisher"},
      {"subscribers", "max_readers_per_process", "subscribers-as", "threads",
       "holds at most {limit} reader(s) per process (--subscribers-as processes has no such limit)"},
  };
  return rules;
}

const std::vector<ConflictRule>& conflict_rules() {
  static const std::vector<ConflictRule> rules = {
      {"wait", "spin", "receive", "listener",
       "not with --receive listener (the middleware's own thread delivers; choose another --receive)"},
  };
  return rules;
}

const OptionRow* find_option(const std::string& name, Command c) {
  for (const OptionRow& r : option_rows())
    if (r.command == c && name == r.name) return &r;
  return nullptr;
}

Value option_default(const char* name) {
  Value v;
  const OptionRow* r = find_option(name);
  if (r != nullptr && r->def != nullptr) parse_value(*r, r->def, &v);
  return v;
}

}  // namespace mwperf
