"""QoS options: values, what each middleware honours, agent arguments."""

import pytest

from conftest import described, qos_request
from mwperf.errors import UsageError
from mwperf.plan.qos import QosOptions, check_supported, parse_qos, qos_agent_args, refusal

AGENT = described()
ADAPTERS = AGENT.adapters
CYCLONE, FASTDDS = ADAPTERS["cyclonedds"], ADAPTERS["fastdds"]


@pytest.fixture
def net(tmp_path):
    for name in ("lo", "eth0"):
        (tmp_path / name).mkdir()
    return tmp_path


def parse(net=None, **options):
    if net is None:
        return parse_qos(AGENT, qos_request(**options))
    return parse_qos(AGENT, qos_request(**options), net_dir=net)


def test_defaults():
    q = parse()
    assert q == QosOptions()
    assert q.reliabilities == (None,) and q.histories is None and q.transports == (None,)
    assert q.instances == 0 and not q.async_ and q.receive is None and q.nic is None
    assert q.match_timeout_ns == 10_000_000_000


def test_lists_dedupe_and_normalise():
    q = parse(reliability="reliable,best_effort,reliable", history="keep-last:10,KEEP-ALL,keep_last:010",
              durability="volatile,transient-local", transport="udp,shm,default,udp")
    assert q.reliabilities == ("reliable", "best-effort")
    assert q.histories == ("keep-last:10", "keep-all")
    assert q.durabilities == ("volatile", "transient-local")
    assert q.transports == ("udp", "shm", None)


def test_best_is_best_effort():
    assert parse(best=True).reliabilities == ("best-effort",)
    assert parse(best=True, reliability="best-effort").reliabilities == ("best-effort",)
    with pytest.raises(UsageError, match="--best: conflicts with --reliability reliable"):
        parse(best=True, reliability="reliable")


def test_keyed_and_instances():
    assert parse(keyed=True).instances == 1
    assert parse(keyed=True, instances="100000").instances == 100000
    with pytest.raises(UsageError, match=r"^--instances 5: needs --keyed"):
        parse(instances="5")
    for bad in ("0", "-3", "x", "10000001"):
        with pytest.raises(UsageError, match=f"--instances {bad}: must be a whole number"):
            parse(keyed=True, instances=bad)


@pytest.mark.parametrize("kwargs, message", [
    (dict(reliability="fast"), "--reliability fast: choose from reliable, best-effort"),
    (dict(history="keep-some"), "--history keep-some: expected keep-last:N or keep-all"),
    (dict(history="keep-last:0"), "--history keep-last:0: the depth must be a whole number from 1 to 1000000"),
    (dict(history="keep-last:x"), "--history keep-last:x: the depth"),
    (dict(durability="persistent"), "--durability persistent: choose from volatile, transient-local"),
    (dict(transport="carrier-pigeon"), "--transport carrier-pigeon: choose from udp, tcp, tcp-nagle, shm, "),
    (dict(receive="poll"), "--receive poll: choose from listener, waitset"),
    (dict(match_timeout="soon"), "--match-timeout soon: "),
    (dict(match_timeout="0"), "--match-timeout 0: "),
    (dict(match_timeout="1e20h"), "--match-timeout 1e20h: longer than an hour (no discovery takes that long)"),
    (dict(match_timeout="61m"), "--match-timeout 61m: longer than an hour"),
])
def test_bad_values(kwargs, message):
    with pytest.raises(UsageError) as info:
        parse(**kwargs)
    assert str(info.value).startswith(message)


def test_nic(net):
    assert parse(net, nic="eth0").nic == "eth0"
    with pytest.raises(UsageError, match=r"^--nic wlan9: no such network interface \(have: eth0, lo\)"):
        parse(net, nic="wlan9")
    with pytest.raises(UsageError, match="--nic ../lo: no such network interface"):
        parse(net, nic="../lo")


@pytest.mark.parametrize("kwargs, mw, message", [
    (dict(async_=True), "cyclonedds", "--async: not supported by cyclonedds (no asynchronous publishing)"),
    (dict(reliability="reliable"), "udp", "--reliability reliable: not supported by udp"),
    (dict(reliability="best-effort,reliable"), "udp", "--reliability reliable: not supported by udp"),
    (dict(best=True), "tcp", "--best: not supported by tcp"),
    (dict(transport="shm"), "cyclonedds", "--transport shm: not supported by cyclonedds (choose from: udp)"),
    (dict(transport="udp"), "tcp", "--transport udp: not supported by tcp (choose from: tcp, tcp-nagle)"),
    (dict(keyed=True, instances="5"), "tcp", "--keyed: not supported by tcp (no keyed topics)"),
    (dict(history="keep-all"), "udp", "--history keep-all: not supported by udp (no history QoS)"),
    (dict(durability="volatile"), "tcp", "--durability volatile: not supported by tcp (no durability QoS)"),
    (dict(receive="listener"), "udp", "--receive listener: not supported by udp (choose from: none)"),
    (dict(nic="lo"), "udp", "--nic lo: not supported by udp (raw sockets always use loopback)"),
])
def test_unsupported(net, kwargs, mw, message):
    q = parse(net, **kwargs)
    assert str(refusal(q, ADAPTERS[mw])) == message
    with pytest.raises(UsageError, match="^" + message.replace("(", r"\(").replace(")", r"\)") + "$"):
        check_supported(q, ["fastdds", mw], ADAPTERS)


@pytest.mark.parametrize("kwargs", [
    dict(reliability="reliable,best-effort", history="keep-last:1,keep-all", durability="transient-local"),
    dict(keyed=True, instances="100000", async_=True, receive="listener", transport="udp,shm,default"),
    dict(best=True, nic="lo"),
])
def test_fastdds_honours_everything(net, kwargs):
    assert refusal(parse(net, **kwargs), FASTDDS) is None


def test_default_transport_is_fine_everywhere():
    q = parse(transport="default")
    assert all(refusal(q, info) is None for info in ADAPTERS.values())


def test_histories_default_only_where_supported():
    q = parse()
    assert q.histories_for(CYCLONE) == ("keep-last:10",)
    assert q.histories_for(ADAPTERS["udp"]) == (None,)
    assert q.histories_for(None) == (None,)
    assert parse(history="keep-all").histories_for(FASTDDS) == ("keep-all",)


def test_agent_args(net):
    q = parse(net, keyed=True, instances="7", async_=True, receive="listener", nic="lo")
    args = qos_agent_args(q, FASTDDS, transport="shm", reliability="best-effort", history="keep-all",
                          durability="transient-local")
    assert args == ["--reliability", "best-effort", "--history", "keep-all", "--durability", "transient-local",
                    "--instances", "7", "--async", "1", "--receive", "listener", "--transport", "shm",
                    "--nic", "lo"]
    assert qos_agent_args(QosOptions(), ADAPTERS["udp"], transport=None, reliability=None, history=None,
                          durability=None) == []


def test_as_dict_is_plain():
    data = parse(reliability="reliable", transport="default,shm").as_dict()
    assert data["reliability"] == ["reliable"] and data["transport"] == [None, "shm"]
    assert data["history"] is None and data["match_timeout_ns"] == 10_000_000_000
