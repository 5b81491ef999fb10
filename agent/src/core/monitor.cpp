#include "core/monitor.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "util/clock.h"
#include "util/distributions.h"
#include "util/own_threads.h"

namespace mwperf {
namespace {

// The farthest an interval reaches from its estimate, in units of what the
// precision allows, over the quantities a look weighs; unknown if one has none.
struct Reach {
  double worst = 0;
  bool known = true;
  void weigh(bool valid, double est, double lo, double hi, double allowed) {
    known = known && valid && allowed > 0;
    if (valid && allowed > 0) worst = std::max(worst, std::max(est - lo, hi - est) / allowed);
  }
};

// The look's verdict and, when it is not there yet, the time it would need:
// a point of that maximum duration looking then, a quarter after its
// previous look (Monitor::next_look), spends 1 - ln(1 + (e - 1) / 1.25) =
// 13.5 % of the error there.
void conclude(Convergence* c, const Reach& r, double confidence, double alpha, bool* done) {
  *done = r.known && r.worst <= 1;
  if (*done) {
    c->needed_ns = c->after_ns;
    return;
  }
  if (!r.known) return;
  const double last = spent_alpha(confidence, 800, 1000, 1000, 2);
  const double widen = normal_quantile(1 - last / 2) / normal_quantile(1 - alpha / 2);
  c->needed_ns = int64_t(std::min(double(c->after_ns) * r.worst * r.worst * widen * widen, 1e18));
}

}  // namespace

Convergence judge(const Batches& b, const LatencyStats& s, double precision, double confidence, const Look& look,
                  bool* done) {
  Convergence c;
  c.after_ns = look.at_ns;
  c.count = s.count();
  c.batches = b.count();
  c.look = look.index;
  const double alpha = spent_alpha(confidence, look.from_ns, look.at_ns, look.max_ns, 2);
  c.p50 = b.interval(s, 500000, 1 - alpha);
  c.p99 = b.interval(s, 990000, 1 - alpha);
  Reach r;
  for (const auto& [i, ppm] : {std::pair<const Interval&, uint64_t>{c.p50, 500000}, {c.p99, 990000}}) {
    const Pct est = s.percentile_ppm(ppm);
    r.weigh(i.valid && est.ok, double(est.v), double(i.lo), double(i.hi), precision * std::fabs(double(est.v)));
  }
  conclude(&c, r, confidence, alpha, done);
  return c;
}

Convergence judge(const FlowBatches& f, double precision, double confidence, const Look& look, bool* done) {
  Convergence c;
  c.flow = true;
  c.after_ns = look.at_ns;
  c.batches = f.count();
  c.look = look.index;
  const double alpha = spent_alpha(confidence, look.from_ns, look.at_ns, look.max_ns, 2);
  c.rate = f.rate(1 - alpha);
  c.loss = f.loss(1 - alpha);
  Reach r;
  r.weigh(c.rate.valid, c.rate.est, c.rate.lo, c.rate.hi, precision * c.rate.est);
  r.weigh(c.loss.valid, c.loss.est, c.loss.lo, c.loss.hi, precision * std::max(c.loss.est, 0.01));
  conclude(&c, r, confidence, alpha, done);
  return c;
}

Convergence judge_loss(const FlowBatches& f, double against, double confidence, const Look& look, bool* done) {
  Convergence c;
  c.flow = true;
  c.after_ns = look.at_ns;
  c.batches = f.count();
  c.look = look.index;
  const double alpha = spent_alpha(confidence, look.from_ns, look.at_ns, look.max_ns, 1);
  c.rate = f.rate(1 - alpha);
  c.loss = f.loss(1 - alpha);
  // The interval's side toward the share, within the distance to it: then it lies on one side.
  const double dist = std::fabs(c.loss.est - against);
  Reach r;
  if (c.loss.est <= against)
    r.weigh(c.loss.valid, c.loss.est, c.loss.est, c.loss.hi, dist);
  else
    r.weigh(c.loss.valid, c.loss.est, c.loss.lo, c.loss.est, dist);
  conclude(&c, r, confidence, alpha, done);
  *done = *done && (c.loss.est <= against ? c.loss.hi <= against : c.loss.lo > against);
  return c;
}

Monitor::Monitor(const LatencyStats& s, double precision, double confidence, int64_t max_ns,
                 std::function<void(int64_t)> on_converged, Flow flow, double stop_loss)
    : s_(s),
      precision_(precision),
      confidence_(confidence),
      stop_loss_(stop_loss),
      max_ns_(max_ns),
      on_converged_(std::move(on_converged)),
      flow_(flow) {}

void Monitor::start(int64_t t0_ns) {
  t0_ = t0_ns;
  thread_ = std::thread([this] {
    const OwnThread me("mwperf-monitor");
    run();
  });
}

uint64_t Monitor::seen() const { return flow_.received ? flow_.received->load(std::memory_order_relaxed) : s_.count(); }

void Monitor::run() {
  std::unique_lock<std::mutex> lk(mu_);
  while (!quit_) {
    cv_.wait_for(lk, std::chrono::nanoseconds(kTickNs), [this] { return quit_; });
    if (quit_) break;
    lk.unlock();
    const int64_t t = now_ns();
    if (t0_ < 0 && seen() > 0) t0_ = t;  // the first measured sample, seen within a tick
    batches_.observe(s_);
    if (flow_.received && t0_ >= 0) {
      const uint64_t received = flow_.received->load(std::memory_order_relaxed);
      flows_.observe(t, received, received + flow_.missing->load(std::memory_order_relaxed));
    }
    if ((precision_ > 0 || stop_loss_ > 0) && t0_ >= 0 && !converged() && t - t0_ >= next_look_) {
      next_look_ = next_look(t - t0_);
      look(t);
    }
    lk.lock();
  }
}

void Monitor::look(int64_t t) {
  const uint32_t ready = flow_.received ? flows_.count() : batches_.count();
  bool done = false;
  if (ready < Batches::kMinBatches) {  // no chance to stop: no look spent
    last_ = Convergence{};
    last_.why = "fewer than 10 batches";
    last_.batches = ready;
  } else {
    const Look l{++looks_, spent_to_, t - t0_, max_ns_};
    spent_to_ = l.at_ns;
    if (stop_loss_ > 0) {
      last_ = judge_loss(flows_, stop_loss_, confidence_, l, &done);
      bool latency = true;
      if (precision_ > 0 && done) {  // and the latency to its precision
        const Convergence lat = judge(batches_, s_, precision_, confidence_, l, &latency);
        last_.p50 = lat.p50;
        last_.p99 = lat.p99;
        last_.needed_ns = latency ? last_.needed_ns : lat.needed_ns;
      }
      done = done && latency;
    } else {
      last_ = flow_.received ? judge(flows_, precision_, confidence_, l, &done)
                             : judge(batches_, s_, precision_, confidence_, l, &done);
    }
  }
  last_.after_ns = t - t0_;
  last_.count = seen();
  if (done) {
    converged_.store(true, std::memory_order_relaxed);
    if (on_converged_) on_converged_(last_.after_ns);
  }
}

void Monitor::stop() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    quit_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) {
    thread_.join();
    batches_.close(s_);  // what arrived since the last batch
  }
}

Summary Monitor::summary() const {
  Summary s = s_.summarize();
  batches_.fill(&s, s_, confidence_);
  return s;
}

}  // namespace mwperf
