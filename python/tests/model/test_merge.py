"""Record merging from canned agent results, numbers checked by hand."""

import dataclasses

import pytest

from conftest import described, run_request
from mwperf.plan.options import PlannedPoint
from mwperf.plan.validate import build_run_options
from mwperf.model.measures import stats_us
from mwperf.model.merge import PointOutcome, merge_record
from mwperf.model.schema import validate_record

AGENT = described()


def stats(p50):
    """As the agent reports them: p99 and beyond are null below the samples that support them."""
    return {"count": 40, "mean": 1500.5, "std": 250.0, "min": 1000, "max": 2000, "p50": p50, "p90": 1900,
            "p99": None, "p9999": None, "p999999": None, "relative_error": 0.000977,
            "p50_ci": [p50 - 100, p50 + 100], "p99_ci": None, "ci_confidence": 0.95, "ci_batches": 12}


def side(role, **extra):
    base = {"event": "result", "role": role, "mw": "udp", "size": 1024, "wait": "block", "clock": "monotonic",
            "cpu_affinity": [0] if role == "pub" else [1], "elapsed_ns": 2_000_000_000,
            "cpu_user_ns": 250_000_000, "cpu_sys_ns": 500_000_000, "maxrss_kb": 5000,
            "adapter_version": "linux 6.1", "foreign": 1}
    base.update(extra)
    return base


def planned(mw="udp", mode="latency", *, index=3, repetition=None, key=None, **options):
    """One point of ``mwperf run`` with these options (2 s, 500 ms warm-up, cross-core, 1 KiB by default)."""
    given = {"size": "1024", "duration": "2s", "warmup": "500ms", "cpu": "0,1", "out": "results/run1", **options}
    opts = build_run_options(run_request(mw=mw, mode=mode, **given), AGENT, cpu_count=2, check_out=False)
    (point,) = opts.points()
    return PlannedPoint(opts, dataclasses.replace(point, index=index), repetition, key)


def record(pub, sub, *, error=None, clock=None, subs=None, **options):
    """The record of the point of ``options`` (see planned) run to these results."""
    return merge_record(planned(**options), PointOutcome(pub, sub, error=error, clock=clock, subs=subs),
                        run_id="run1", time="2025-01-01T00:00:00.000Z")


def merge(mode, pub, sub, rate=None, error=None, cpu="0,1"):
    return record(pub, sub, error=error, mode=mode, cpu=cpu, **({"rate": str(rate)} if rate else {}))


UDP_QOS = {"history": None, "durability": None, "instances": None, "async": None, "batch": None, "congestion": None,
           "whc_high": None, "receive": None, "nic": None, "security": None}


def test_latency_mode():
    pub = side("pub", mode="latency", sent=1000, pongs=990, discovery_ns=2_500_000,
               rtt_ns=stats(3000), latency_ns=stats(1500))
    sub = side("sub", mode="latency", received=1000, lost=0, duplicates=2, out_of_order=3, samples_per_s=500.0,
               latency_ns=None, foreign=2)
    r = merge("latency", pub, sub)
    validate_record(r)
    assert r["status"] == "ok" and r["error"] is None
    assert (r["sent"], r["received"], r["lost"]) == (1000, 990, 10)
    assert r["loss_rate"] == pytest.approx(0.01)
    assert r["samples_per_s"] == pytest.approx(495.0)  # 990 pongs / 2 s
    assert r["mbps"] == pytest.approx(495.0 * 1024 * 8 / 1e6)  # 4.05504
    assert r["latency_us"]["p50"] == pytest.approx(1.5)
    assert r["rtt_us"]["p50"] == pytest.approx(3.0)
    assert r["latency_us"]["mean"] == pytest.approx(1.5005)
    # every sample is behind the percentiles (histogram, 0.1 %); p99 is not measured from 40 samples
    assert r["latency_us"]["count"] == 40 and "exact" not in r["latency_us"] and "kept" not in r["latency_us"]
    assert r["latency_us"]["relative_error"] == pytest.approx(0.000977)
    assert r["latency_us"]["p99"] is None and r["latency_us"]["p9999"] is None
    assert r["latency_us"]["p50_ci"] == pytest.approx([1.4, 1.6]) and r["latency_us"]["p99_ci"] is None
    assert (r["latency_us"]["ci_confidence"], r["latency_us"]["ci_batches"]) == (0.95, 12)
    assert r["repetition"] is None and r["point_key"] is None and r["adaptive"] is None
    assert r["elapsed_s"] == pytest.approx(2.0)
    assert (r["duplicates"], r["out_of_order"], r["foreign"]) == (2, 3, 3)
    assert r["loop_rate"] is None and r["rate_hz"] is None
    assert r["discovery_ms"] == pytest.approx(2.5)
    assert r["cpu"] == {"pub": 0, "sub": 1, "placement": "cross-core", "pub_affinity": [0], "sub_affinity": [1]}
    assert r["cpu_s"] == {"pub": {"user": 0.25, "sys": 0.5}, "sub": {"user": 0.25, "sys": 0.5}}
    assert r["rss_kb"] == {"pub": 5000, "sub": 5000}
    assert r["transport"] == "udp" and r["reliability"] == "best-effort"
    assert r["adapter"] == {"name": "udp", "version": "linux 6.1", "config": None, "sub_config": None,
                            "versions": None, "data_path": None, "zero_copy": {"path": "copy", "source": "adapter"}}
    assert r["qos"] == UDP_QOS  # raw sockets have no QoS to choose
    assert (r["stamp_clock"], r["latency_count"], r["precision"], r["confidence"]) == ("monotonic", None, None, 0.95)
    assert r["mw_rss_kb"] == {"pub": None, "sub": None}  # no rss_before_open_kb from this agent
    assert r["send_lag_us"] is None
    assert (r["duration_s"], r["warmup_s"]) == (2.0, 0.5)


def test_throughput_mode():
    pub = side("pub", mode="throughput", sent=200_000, pongs=20, discovery_ns=1000,
               rtt_ns=stats(40000), latency_ns=stats(20000))
    sub = side("sub", mode="throughput", received=199_000, lost=1000, duplicates=0, out_of_order=0,
               samples_per_s=99_500.0, latency_ns=stats(7000))
    r = merge("throughput", pub, sub)
    validate_record(r)
    assert (r["sent"], r["received"], r["lost"]) == (200_000, 199_000, 1000)
    assert r["loss_rate"] == pytest.approx(0.005)
    assert r["samples_per_s"] == 99_500.0
    assert r["mbps"] == pytest.approx(815.104)  # 99500 * 1024 * 8 / 1e6
    assert r["latency_us"]["p50"] == pytest.approx(20.0)  # the pub's RTT/2, not the sub's one-way
    assert r["rtt_us"]["p50"] == pytest.approx(40.0)


def test_rate_mode():
    # 10 000 sent of 12 500 due by the deadline: the publisher fell behind
    pub = side("pub", mode="rate", sent=10_000, pongs=0, rate_hz=1000.0, scheduled=12_500, unsent=2_500,
               send_timeouts=0, discovery_ns=0)
    sub = side("sub", mode="rate", received=9_990, lost=10, duplicates=0, out_of_order=1,
               samples_per_s=999.0, latency_ns=stats(45000))
    r = merge("rate", pub, sub, rate=1000.0)
    validate_record(r)
    assert r["rate_hz"] == 1000.0
    assert r["loop_rate"] == pytest.approx(0.8)
    assert (r["scheduled"], r["unsent"]) == (12_500, 2_500)
    assert (r["sent"], r["received"], r["lost"]) == (10_000, 9_990, 10)
    assert r["loss_rate"] == pytest.approx(0.001)
    assert r["latency_us"]["p50"] == pytest.approx(45.0)  # one-way, from the sub
    assert r["rtt_us"] is None
    assert r["mbps"] == pytest.approx(999.0 * 1024 * 8 / 1e6)


def test_zero_sent_gives_zero_loss_rate_and_fails():
    pub = side("pub", mode="latency", sent=0, pongs=0, rtt_ns=None, latency_ns=None)
    sub = side("sub", mode="latency", received=0, lost=0, duplicates=0, out_of_order=0, samples_per_s=0.0)
    r = merge("latency", pub, sub)
    validate_record(r)
    assert r["loss_rate"] == 0.0 and r["latency_us"] is None
    assert r["status"] == "failed" and r["error"] == "no sample sent"


@pytest.mark.parametrize("mode, pub_extra, sub_extra, reason", [
    ("latency", dict(sent=40, pongs=0), dict(received=40, lost=0), "no pong received (lost 100% of 40 pings)"),
    ("throughput", dict(sent=5000, pongs=0), dict(received=0, lost=5000), "no sample received (lost 100%)"),
    ("rate", dict(sent=200, pongs=0, rate_hz=100.0, scheduled=200), dict(received=0, lost=200),
     "no sample received (lost 100%)"),
])
def test_total_loss_fails_the_point(mode, pub_extra, sub_extra, reason):
    pub = side("pub", mode=mode, **pub_extra)
    sub = side("sub", mode=mode, duplicates=0, out_of_order=0, samples_per_s=0.0, **sub_extra)
    r = merge(mode, pub, sub, rate=100.0 if mode == "rate" else None)
    validate_record(r)
    assert r["status"] == "failed" and r["error"] == reason
    assert r["sent"] == pub_extra["sent"] and r["received"] == 0 and r["lost"] == r["sent"]
    assert r["loss_rate"] == 1.0


def test_partial_loss_is_ok():
    pub = side("pub", mode="throughput", sent=5000, pongs=0)
    sub = side("sub", mode="throughput", received=1, lost=4999, duplicates=0, out_of_order=0, samples_per_s=1.0)
    assert merge("throughput", pub, sub)["status"] == "ok"




def dds_config(**extra):
    config = {"transport": "shm", "interface_whitelist": "", "reliability": "best-effort",
              "durability": "transient-local", "history": "keep-last:1", "instances": 100000,
              "receive": "listener", "publish_mode": "asynchronous", "domain": 0}
    config.update(extra)
    return config


DDS_OPTIONS = dict(mode="rate", rate="200", transport="shm", reliability="best-effort", history="keep-last:1",
                   durability="transient-local", keyed=True, instances="100000", async_=True, receive="listener")


def dds_merge(pub, sub, options=None, error=None):
    return record(pub, sub, error=error, mw="fastdds", duration="1s", warmup="0", index=0,
                  **(DDS_OPTIONS if options is None else options))


def test_dds_record_takes_what_the_agents_report():
    lag = stats(7000)
    pub = side("pub", mw="fastdds", mode="rate", sent=200, pongs=0, rate_hz=200.0, scheduled=200,
               transport="shm", reliability="best-effort", adapter_config=dds_config(),
               rss_before_open_kb=1000, maxrss_kb=9500, own_kb=512, cpu_window_ns=1_000_000_000, send_lag_ns=lag)
    sub = side("sub", mw="fastdds", mode="rate", received=200, lost=0, duplicates=0, out_of_order=0,
               samples_per_s=200.0, latency_ns=stats(50000), transport="shm", reliability="best-effort",
               adapter_config=dds_config(topic_in="x"), rss_before_open_kb=1000, maxrss_kb=900, own_kb=640)
    r = dds_merge(pub, sub)
    validate_record(r)
    assert r["status"] == "ok"
    assert (r["transport"], r["reliability"]) == ("shm", "best-effort")
    assert r["qos"] == {"history": "keep-last:1", "durability": "transient-local", "instances": 100000,
                        "async": True, "batch": None, "congestion": None, "whc_high": None, "receive": "listener",
                        "nic": None, "security": "none"}
    assert r["adapter"]["config"] == dds_config() and r["adapter"]["sub_config"]["topic_in"] == "x"
    # mwperf's own buffers were allocated before the RSS baseline: not the middleware's
    assert r["mw_rss_kb"] == {"pub": 9500 - 1000, "sub": 0}  # floor 0
    assert r["own_kb"] == {"pub": 512, "sub": 640}
    assert r["cpu_window_s"] == {"pub": 1.0, "sub": None}
    assert r["send_lag_us"]["p50"] == pytest.approx(7.0) and r["send_lag_us"]["count"] == 40


def test_effective_config_wins_over_the_request():
    pub = side("pub", mw="fastdds", mode="latency", sent=10, pongs=10, transport="shm+udp",
               reliability="reliable", adapter_config=dds_config(history="keep-last:10", instances=0, receive="waitset",
                                                                 **{"async": False}))
    sub = side("sub", mw="fastdds", mode="latency", received=10, lost=0, duplicates=0, out_of_order=0)
    r = dds_merge(pub, sub, dict(mode="latency", receive="listener"))
    assert (r["transport"], r["reliability"]) == ("shm+udp", "reliable")
    assert r["qos"]["async"] is False and r["qos"]["instances"] == 0 and r["qos"]["receive"] == "waitset"
    assert r["send_lag_us"] is None  # not rate mode


def test_failed_dds_point_records_the_request():
    r = dds_merge(None, None, error="pub: fastdds: no matching peer within 10 s")
    validate_record(r)
    assert r["status"] == "failed"
    assert (r["transport"], r["reliability"]) == ("shm", "best-effort")  # requested
    assert r["qos"] == {"history": "keep-last:1", "durability": "transient-local", "instances": 100000,
                        "async": True, "batch": None, "congestion": None, "whc_high": None, "receive": "listener",
                        "nic": None, "security": "none"}
    assert r["adapter"] == {"name": "fastdds", "version": AGENT.adapters["fastdds"].version, "config": None,
                            "sub_config": None, "versions": None, "data_path": None,
                            "zero_copy": {"path": "shm", "source": "adapter"}}  # the transport requested
    r = dds_merge(None, None, dict(mode="latency"), error="boom")
    assert (r["transport"], r["reliability"]) == ("shm+udp", "reliable")  # the adapter's defaults
    # the table's defaults where the middleware has the capability, the adapter's own else; null where it has none
    assert r["qos"] == {"history": "keep-last:10", "durability": "volatile", "instances": 0, "async": False,
                        "batch": None, "congestion": None, "whc_high": None, "receive": "listener",
                        "nic": None, "security": "none"}


def test_failed_point_keeps_what_is_known():
    pub = side("pub", mode="throughput", sent=5000, pongs=1, rtt_ns=stats(1), latency_ns=stats(1))
    r = merge("throughput", pub, None, error="sub: no result after stop within 5.2 s (agent hung?)")
    validate_record(r)
    assert r["status"] == "failed"
    assert r["error"].startswith("sub: no result")
    assert r["sent"] == 5000
    assert r["received"] is None and r["lost"] is None and r["loss_rate"] is None
    assert r["cpu_s"]["sub"] is None and r["rss_kb"]["sub"] is None
    assert r["cpu"]["sub_affinity"] is None


def test_failed_point_with_nothing():
    r = merge("rate", None, None, rate=50.0, error="sub: killed by SIGKILL before its ready event", cpu="none")
    validate_record(r)
    assert r["status"] == "failed" and r["rate_hz"] == 50.0 and r["loop_rate"] is None
    assert r["cpu"]["placement"] == "unpinned"
    assert r["adapter"]["version"] == described().adapters["udp"].version  # from the agent's description


def test_missing_side_without_error_is_failed():
    pub = side("pub", mode="latency", sent=1, pongs=1)
    r = merge("latency", pub, None)
    assert r["status"] == "failed" and r["error"] == "subscriber result missing"


def test_stats_us():
    assert stats_us(None) is None
    empty = {"count": 0, "mean": None, "std": None, "min": None, "max": None, "p50": None, "p90": None,
             "p99": None, "p9999": None, "p999999": None, "relative_error": 0.000977, "p50_ci": None,
             "p99_ci": None, "ci_confidence": 0.95, "ci_batches": 0}
    converted = stats_us(empty)
    assert converted["count"] == 0 and converted["p50"] is None and converted["ci_batches"] == 0
    assert stats_us(stats(2500))["p50"] == 2.5
    # a constant shift moves every value and interval, not the spread
    shifted = stats_us(stats(2500), 3_000_000_000)
    assert shifted["p50"] == pytest.approx(3_000_002.5) and shifted["min"] == pytest.approx(3_000_001.0)
    assert shifted["std"] == pytest.approx(0.25) and shifted["p50_ci"] == pytest.approx([3_000_002.4, 3_000_002.6])


def test_adaptive_point_records_precision_and_early_stop():
    look = {"after_ns": 750_000_000, "count": 900, "batches": 12, "look": 3, "p50_ci": [1400, 1600],
            "p99_ci": [1900, 2100]}
    pub = side("pub", mode="latency", sent=1000, pongs=1000, rtt_ns=stats(3000), latency_ns=stats(1500),
               converged_after_ns=750_000_000, stopped_early=False, elapsed_ns=750_100_000,
               convergence=look, last_look=look)
    sub = side("sub", mode="latency", received=1000, lost=0, latency_ns=None, converged_after_ns=-1,
               convergence=None, last_look=None)
    r = record(pub, sub, warmup="0", repetition=2, key="abc", precision="5%", confidence="0.99", index=0)
    validate_record(r)
    reached = {"after_s": 0.75, "count": 900, "batches": 12, "look": 3, "p50_ci": [1.4, 1.6], "p99_ci": [1.9, 2.1],
               "needed_s": None, "why": {}, "rate": None, "loss": None}
    assert (r["precision"], r["confidence"]) == (0.05, 0.99)
    assert r["adaptive"] == {"converged_after_s": 0.75, "stopped_early": True, "at_convergence": reached,
                             "last_look": reached, "needed_s": None, "needed_note": None}
    assert (r["repetition"], r["point_key"], r["samples"]) == (2, "abc", None)
    assert r["elapsed_s"] == pytest.approx(0.7501)


def test_an_adaptive_point_that_ran_its_full_duration_shows_its_last_look():
    """Rate mode: the subscriber decides; it never converged, and its last look
    (after 9.75 s, look 38) had a p99 interval of +-50 %: it would need 62 s."""
    pub = side("pub", mode="rate", sent=100, scheduled=100, send_lag_ns=stats(1000), rtt_ns=None, latency_ns=None,
               converged_after_ns=-1, convergence=None, last_look=None, stopped_early=False)
    sub = side("sub", mode="rate", received=100, lost=0, latency_ns=stats(100_000), converged_after_ns=-1,
               convergence=None, last_look={"after_ns": 9_750_000_000, "count": 48000, "batches": 40, "look": 38,
                                            "p50_ci": [9000, 11000], "p99_ci": [20000, 60000],
                                            "needed_ns": 62_000_000_000, "why": {}})
    r = record(pub, sub, mode="rate", rate="100", duration="10s", warmup="0", precision="10%", index=0)
    validate_record(r)
    a = r["adaptive"]
    assert a["converged_after_s"] is None and a["at_convergence"] is None and not a["stopped_early"]
    assert a["last_look"] == {"after_s": 9.75, "count": 48000, "batches": 40, "look": 38, "p50_ci": [9.0, 11.0],
                              "p99_ci": [20.0, 60.0], "needed_s": 62.0, "why": {}, "rate": None, "loss": None}
    assert a["needed_s"] == 62.0 and a["needed_note"] is None


def test_an_adaptive_point_without_an_interval_says_why_it_would_need_more():
    """A throughput point: the subscriber watches the flow, whose loss had no
    interval at its last look: no need extrapolated, but the reason."""
    pub = side("pub", mode="throughput", sent=1000, pongs=1, rtt_ns=stats(3000), latency_ns=stats(1500),
               converged_after_ns=-1, convergence=None, last_look=None, stopped_early=False)
    look = {"after_ns": 1_500_000_000, "count": 900, "batches": 12, "look": 2, "p50_ci": None, "p99_ci": None,
            "rate": {"est": 5000.0, "lo": 4800.0, "hi": 5200.0}, "loss": {"est": 0.1, "lo": None, "hi": None},
            "needed_ns": -1, "why": {"loss": "correlation too long for the run"}}
    sub = side("sub", mode="throughput", received=900, lost=100, latency_ns=stats(2000), converged_after_ns=-1,
               convergence=None, last_look=look)
    r = record(pub, sub, mode="throughput", precision="5%", index=0)
    validate_record(r)
    a = r["adaptive"]
    assert a["needed_s"] is None and a["needed_note"] == "loss: correlation too long for the run"
    assert a["last_look"]["rate"] == {"est": 5000.0, "lo": 4800.0, "hi": 5200.0}
    assert a["last_look"]["p50_ci"] is None


def test_pings_lost_to_the_timeout_are_in_the_record():
    pub = side("pub", mode="latency", sent=100, pongs=97, ping_lost=3, late_pongs=2, ping_timeout_ns=1_000_000_000,
               rtt_ns=stats(3000), latency_ns=stats(1500))
    sub = side("sub", mode="latency", received=100, lost=0, latency_ns=None)
    r = merge("latency", pub, sub)
    validate_record(r)
    assert (r["ping_lost"], r["late_pongs"], r["ping_timeout_s"]) == (3, 2, 1.0)
    rate = merge("rate", side("pub", mode="rate", sent=10, scheduled=10, ping_lost=0, late_pongs=0),
                 side("sub", mode="rate", received=10, lost=0, latency_ns=stats(100)), rate=10.0)
    assert (rate["ping_lost"], rate["late_pongs"], rate["ping_timeout_s"]) == (None, None, None)


def test_intervals_and_why_there_is_none():
    st = dict(stats(2500), p999=None, p999_ci=None, ci_method="woodruff-batch-means",
              ci_null={"p999_ci": "fewer than one independent sample beyond it"})
    r = merge("latency", side("pub", mode="latency", sent=40, pongs=40, rtt_ns=st, latency_ns=st),
              side("sub", mode="latency", received=40, lost=0, latency_ns=None))
    validate_record(r)
    lat = r["latency_us"]
    assert lat["p50_ci"] == [2.4, 2.6] and lat["p999_ci"] is None and lat["ci_method"] == "woodruff-batch-means"
    assert lat["ci_null"] == {"p999_ci": "fewer than one independent sample beyond it"}


@pytest.mark.parametrize("same_clock, uncertainty, flagged", [(False, 20.0, True), (False, 5.0, False),
                                                              (True, 20.0, False)])
def test_one_way_results_across_uncertain_clocks_are_flagged(same_clock, uncertainty, flagged):
    pub = side("pub", mode="rate", sent=100, scheduled=100, send_lag_ns=stats(1000), rtt_ns=None, latency_ns=None)
    sub = side("sub", mode="rate", received=100, lost=0, latency_ns=stats(100_000))  # p50 100 us
    clock = {"offset_us": 3.0, "uncertainty_us": uncertainty, "method": "m", "same_clock": same_clock, "sync": {}}
    r = record(pub, sub, mode="rate", rate="100", duration="1s", warmup="0", clock=clock, index=0)
    validate_record(r)
    assert r["clock"]["flagged"] is flagged


def test_two_clocks_offset_subtracted_raw_kept_uncertainty_carried():
    """The subscriber subtracted a 3 s offset from each sample; the record keeps both."""
    pub = side("pub", mode="rate", sent=100, scheduled=100, send_lag_ns=stats(1000), rtt_ns=None, latency_ns=None)
    sub = side("sub", mode="rate", received=100, lost=0, latency_ns=stats(100_000), clock_offset_ns=3_000_000_000)
    clock = {"offset_us": 3_000_000.0, "uncertainty_us": 40.0, "method": "m", "same_clock": False, "sync": {}}
    r = record(pub, sub, mode="rate", rate="100", duration="1s", warmup="0", clock=clock, index=0)
    validate_record(r)
    assert r["latency_us"]["p50"] == pytest.approx(100.0)
    assert r["latency_raw_us"]["p50"] == pytest.approx(3_000_100.0)
    assert r["latency_us"]["uncertainty_us"] == 40.0
    assert r["clock"]["applied_us"] == pytest.approx(3_000_000.0) and r["stamp_clock"] == "monotonic"
    assert r["clock"]["flagged"] is True  # 40 us of uncertainty against a p50 of 100 us
    clock["uncertainty_us"] = 5.0
    r = record(pub, sub, mode="rate", rate="100", duration="1s", warmup="0", clock=clock, index=0)
    assert r["clock"]["flagged"] is False


def fan_out_record(how: str, subs: list[dict]):
    pub = side("pub", mode="rate", sent=200, scheduled=200, latency_ns=None)
    return record(pub, subs[0], subs=subs, mw="cyclonedds", mode="rate", rate="100", subscribers=str(len(subs)),
                  subscribers_as=how, index=0)


def fan_out_sub(pid: int, reader: int, readers: int, cpu_ms: int, window_ms: int = 2000):
    return side("sub", mode="rate", pid=pid, reader=reader, readers=readers, cpu_scope="process", received=200, lost=0,
                samples_per_s=100.0, latency_ns=stats(50_000 + 1000 * reader), cpu_user_ns=cpu_ms * 1_000_000,
                cpu_sys_ns=0, cpu_window_ns=window_ms * 1_000_000)


def test_fan_out_as_processes_adds_every_process_cpu():
    subs = [fan_out_sub(100 + i, 0, 1, cpu_ms=100 * (i + 1)) for i in range(3)]
    r = fan_out_record("processes", subs)
    validate_record(r)
    assert r["subscribers_as"] == "processes"
    assert [row["cpu_scope"] for row in r["per_subscriber"]] == ["subscriber"] * 3
    assert [row["reader"] for row in r["per_subscriber"]] == [None] * 3
    assert [row["cpu_s"]["user"] for row in r["per_subscriber"]] == pytest.approx([0.1, 0.2, 0.3])
    assert r["fanout"]["cpu_s"]["user"] == pytest.approx(0.6)  # three processes
    assert r["fanout"]["cpu_pct"] == pytest.approx(5 + 10 + 15)


def test_fan_out_as_threads_counts_the_one_process_once():
    """Four readers of one process each report the process's CPU (cpu_scope
    process): the record has it once, in reader 0's row and the fan-out total."""
    subs = [fan_out_sub(4242, i, 4, cpu_ms=400) for i in range(4)]
    r = fan_out_record("threads", subs)
    validate_record(r)
    assert r["subscribers_as"] == "threads" and r["subscribers"] == 4
    rows = r["per_subscriber"]
    assert [row["reader"] for row in rows] == [0, 1, 2, 3]
    assert [row["cpu_scope"] for row in rows] == ["process", "shared", "shared", "shared"]
    assert rows[0]["cpu_s"] == {"user": pytest.approx(0.4), "sys": 0.0} and rows[0]["cpu_pct"] == pytest.approx(20)
    assert all(row["cpu_s"] is None and row["cpu_pct"] is None and row["rss_kb"] is None for row in rows[1:])
    assert r["fanout"]["cpu_s"]["user"] == pytest.approx(0.4)  # not 1.6
    assert r["fanout"]["cpu_pct"] == pytest.approx(20)
    assert r["cpu_s"]["sub"]["user"] == pytest.approx(0.4)
    assert [row["received"] for row in rows] == [200] * 4
    assert r["fanout"]["latency_p50_us"]["worst"] == pytest.approx(53.0)


def test_a_point_with_one_subscriber_says_processes():
    r = merge("latency", side("pub", mode="latency", sent=10, pongs=10, latency_ns=stats(1500), rtt_ns=stats(3000)),
              side("sub", mode="latency", received=10, lost=0))
    validate_record(r)
    assert r["subscribers_as"] == "processes" and r["per_subscriber"] is None and r["fanout"] is None


def test_the_middlewares_versions_and_each_sides_data_path_are_recorded():
    """What the agents read from the middleware after the measured phase: the
    versions of every library in use, and which path each side's samples took."""
    pub = side("pub", sent=100, versions={"rcl": "9.2.8", "rmw_fastrtps_cpp": "8.4.3", "fastdds": "2.14.5"},
               data_path={"send": "shm", "receive": "copy", "sent": 100, "sent_shm": 100, "received": 0})
    sub = side("sub", received=100, lost=0, data_path={"send": "none", "receive": "shm", "received": 100,
                                                       "received_shm": 100})
    r = merge("throughput", pub, sub)
    validate_record(r)
    assert r["adapter"]["versions"] == {"rcl": "9.2.8", "rmw_fastrtps_cpp": "8.4.3", "fastdds": "2.14.5"}
    assert r["adapter"]["data_path"]["pub"]["send"] == "shm"
    assert r["adapter"]["data_path"]["sub"]["receive"] == "shm"
    assert r["adapter"]["zero_copy"] == {"path": "shm", "source": "middleware"}  # the subscriber's word


def test_cpu_per_message_and_the_window_each_side_says():
    """0.75 s of CPU a side (fixture) over 100 delivered samples: 7500 us each;
    the window as each agent says it."""
    r = merge("rate", side("pub", sent=100, cpu_window="first measured sample sent to the last"),
              side("sub", received=100, lost=0, cpu_window="first measured sample received to the last"), rate=50)
    validate_record(r)
    assert r["cpu_us_per_msg"] == {"pub": pytest.approx(7500.0), "sub": pytest.approx(7500.0)}
    assert r["cpu_window"]["sub"] == "first measured sample received to the last"
    assert r["adapter"]["zero_copy"] == {"path": "copy", "source": "adapter"}  # udp: the network stack
