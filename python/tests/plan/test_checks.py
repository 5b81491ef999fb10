"""The option table's checks: values (kind, range, choices), what each
middleware honours (its capabilities), limits and conflicts, and the
agents' arguments built from the table."""

import pytest

from conftest import described, run_request
from mwperf.errors import UsageError
from mwperf.execute.point import agent_argv
from mwperf.plan.validate import build_run_options

AGENT = described()
ADAPTERS = AGENT.adapters


@pytest.fixture
def net(tmp_path, monkeypatch):
    for name in ("lo", "eth0"):
        (tmp_path / name).mkdir()
    monkeypatch.setattr("mwperf.plan.validate.NET_DIR", tmp_path)
    return tmp_path


def build(mw="fastdds", **options):
    return build_run_options(run_request(mw=mw, **options), AGENT, cpu_count=2, check_out=False)


def test_defaults_are_the_tables():
    opts = build()
    (point,) = opts.points()
    assert point.get("history") == "keep-last:10" and point.get("durability") == "volatile"
    assert point.get("instances") == 0 and point.get("async") is False and point.get("reliability") is None
    assert point.get("match-timeout") == 10_000_000_000 and point.get("duration") == 5_000_000_000
    # a middleware without the capability is asked nothing: its values are None
    (udp,) = build(mw="udp").points()
    assert udp.get("history") is None and udp.get("durability") is None and udp.get("batch") is None


def test_lists_dedupe_and_normalise():
    opts = build(reliability="reliable,best_effort,reliable", history="keep-last:10,KEEP-ALL,keep_last:010",
                 durability="volatile,transient-local", transport="udp,shm,default,udp")
    assert opts.given("reliability") == ("reliable", "best-effort")
    assert opts.given("history") == ("keep-last:10", "keep-all")
    assert opts.given("durability") == ("volatile", "transient-local")
    assert opts.given("transport") == ("udp", "shm", None)
    assert len(opts.points()) == 2 * 2 * 2 * 3


def test_best_is_best_effort():
    assert build(best=True).given("reliability") == ("best-effort",)
    assert build(best=True, reliability="best-effort").given("reliability") == ("best-effort",)
    with pytest.raises(UsageError, match="--best: conflicts with --reliability reliable"):
        build(best=True, reliability="reliable")


def test_keyed_and_instances():
    assert build(keyed=True).given("instances") == (1,)
    assert build(keyed=True, instances="100000").given("instances") == (100000,)
    with pytest.raises(UsageError, match=r"^--instances 5: needs --keyed"):
        build(instances="5")
    with pytest.raises(UsageError, match="--instances 0: a keyed topic has 1 instance or more"):
        build(keyed=True, instances="0")
    for bad in ("-3", "x", "10000001"):
        with pytest.raises(UsageError, match=f"--instances {bad}: must be"):
            build(keyed=True, instances=bad)


@pytest.mark.parametrize("kwargs, message", [
    (dict(reliability="fast"), "--reliability fast: choose from reliable, best-effort"),
    (dict(history="keep-some"), "--history keep-some: expected keep-last:N (N from 1 to 1000000) or keep-all"),
    (dict(history="keep-last:0"), "--history keep-last:0: expected keep-last:N"),
    (dict(history="keep-last:x"), "--history keep-last:x: expected keep-last:N"),
    (dict(durability="persistent"), "--durability persistent: choose from volatile, transient-local"),
    (dict(transport="carrier-pigeon"), "--transport carrier-pigeon: choose from udp, tcp, tcp-nagle, "),
    (dict(receive="poll"), "--receive poll: choose from listener, waitset"),
    (dict(match_timeout="soon"), "--match-timeout soon: "),
    (dict(match_timeout="1e20h"), "--match-timeout 1e20h: "),
    (dict(match_timeout="61m"), "--match-timeout 61m: must be from 0ns to 1h"),
    (dict(confidence="0.97"), "--confidence 0.97: choose from 0.90, 0.95, 0.99"),
    (dict(precision="150%"), "--precision 150%: must be from 0.01% to 99.99%"),
])
def test_bad_values(kwargs, message):
    with pytest.raises(UsageError) as info:
        build(**kwargs)
    assert str(info.value).startswith(message)


def test_nic(net):
    assert build(nic="eth0").given("nic") == ("eth0",)
    with pytest.raises(UsageError, match=r"^--nic wlan9: no such network interface \(have: eth0, lo\)"):
        build(nic="wlan9")
    with pytest.raises(UsageError, match="--nic ../lo: no such network interface"):
        build(nic="../lo")


@pytest.mark.parametrize("kwargs, mw, message", [
    (dict(async_=True), "cyclonedds", "--async: not supported by cyclonedds (no asynchronous publishing)"),
    (dict(batch=True), "fastdds", "--batch: not supported by fastdds (no write batching)"),
    (dict(reliability="reliable"), "udp", "--reliability reliable: not supported by udp (choose from: best-effort)"),
    (dict(reliability="best-effort,reliable"), "udp", "--reliability reliable: not supported by udp"),
    (dict(best=True), "tcp", "--reliability best-effort: not supported by tcp (choose from: reliable)"),
    (dict(transport="shm"), "cyclonedds", "--transport shm: not supported by cyclonedds (choose from: udp)"),
    (dict(transport="udp"), "tcp", "--transport udp: not supported by tcp (choose from: tcp, tcp-nagle)"),
    (dict(keyed=True, instances="5"), "tcp", "--instances 5: not supported by tcp (no keyed topics)"),
    (dict(history="keep-all"), "udp", "--history keep-all: not supported by udp (no history QoS)"),
    (dict(durability="transient-local"), "tcp", "--durability transient-local: not supported by tcp"),
    (dict(receive="listener"), "udp", "--receive listener: not supported by udp"),
    (dict(congestion="drop"), "fastdds", "--congestion drop: not supported by fastdds (no congestion control to choose)"),
    (dict(nic="lo"), "udp", "--nic lo: not supported by udp (raw sockets always use loopback)"),
])
def test_unsupported(net, kwargs, mw, message):
    with pytest.raises(UsageError) as info:
        build(mw=f"fastdds,{mw}" if mw != "fastdds" else mw, **kwargs)
    assert str(info.value).startswith(message)


@pytest.mark.parametrize("kwargs", [
    dict(reliability="reliable,best-effort", history="keep-last:1,keep-all", durability="transient-local"),
    dict(keyed=True, instances="100000", async_=True, receive="listener", transport="udp,shm,default"),
    dict(best=True, nic="lo"),
    dict(durability="volatile", congestion="block", batch=False),  # the defaults ask for nothing
])
def test_fastdds_honours_everything(net, kwargs):
    build(**kwargs)


def test_without_mw_every_middleware_that_honours_the_options():
    opts = build_run_options(run_request(batch=True), AGENT, cpu_count=2, check_out=False)
    assert set(opts.mws) == {n for n, a in ADAPTERS.items() if a.honours("batch")}


def test_limits_and_conflicts():
    with pytest.raises(UsageError, match=r"^--size 70000: udp carries at most 65507 bytes per message"):
        build(mw="udp", size="70000")
    with pytest.raises(UsageError, match=r"^--subscribers 2: udp serves at most 1 subscriber\(s\) per publisher"):
        build(mw="udp", subscribers="2")
    with pytest.raises(UsageError, match=r"^--wait spin: not with --receive listener"):
        build(mw="cyclonedds", wait="spin", receive="listener")
    build(mw="cyclonedds", wait="spin")  # the agent polls the first way it can


def test_agent_args_come_from_the_table(net, tmp_path):
    opts = build(keyed=True, instances="7", async_=True, receive="listener", nic="lo", transport="shm",
                 reliability="best-effort", history="keep-all", durability="transient-local", mode="rate",
                 rate="100", duration="1s", out=str(tmp_path))
    (point,) = opts.points()
    pub = agent_argv("A", "pub", point, opts, 0)
    assert pub[:8] == ["A", "run", "--role", "pub", "--mw", "fastdds", "--mode", "rate"]
    joined = " ".join(pub)
    for part in ("--rate 100.0", "--duration 1000000000", "--reliability best-effort", "--history keep-all",
                 "--durability transient-local", "--instances 7", "--async 1", "--receive listener", "--nic lo",
                 "--transport shm"):
        assert part in joined
    sub = " ".join(agent_argv("A", "sub", point, opts, 0))
    assert "--rate" not in sub and "--duration" not in sub and "--durability transient-local" in sub
    # a middleware without a capability is asked nothing of it, defaults are never passed
    udp_opts = build(mw="udp", out=str(tmp_path))
    argv = " ".join(agent_argv("A", "pub", udp_opts.points()[0], udp_opts, 0))
    for option in ("--history", "--durability", "--batch", "--warmup", "--match-timeout", "--size"):
        assert option not in argv
