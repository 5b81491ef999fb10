"""Which path a record's samples took, and what makes two records unlike,
on synthetic records whose answers are known by construction."""

import pytest

from conftest import typed
from mwperf.model.fairness import traits, unlike, zero_copy


@pytest.mark.parametrize("mw, transport, link, data_path, expected", [
    ("iceoryx", "shm", None, None, ("loan", "adapter")),
    ("zenoh", "shm", None, {"sub": {"send": "none", "receive": "copy"}}, ("copy", "middleware")),  # fell back
    ("zenoh", "shm", None, {"sub": {"send": "none", "receive": "shm"}}, ("shm", "middleware")),
    ("fastdds", "shm+udp", None, None, ("shm", "adapter")),
    ("fastdds", "shm+udp", {"kind": "netns"}, None, ("copy", "adapter")),  # two hosts: no shared memory
    ("cyclonedds", "udp", None, None, ("copy", "adapter")),
    ("ros1", "tcpros", None, {"pub": None, "sub": None}, ("copy", "adapter")),
])
def test_zero_copy_path(mw, transport, link, data_path, expected):
    zc = zero_copy(mw, transport, link is None, data_path)
    assert (zc["path"], zc["source"]) == expected


def rec(mw="fastdds", **extra):
    r = {"mw": mw, "transport": "shm+udp", "link": None, "wait": "block", "qos": {"async": False, "receive": "waitset"},
         "adapter": {"versions": {"fastdds": "2.9.1"}, "config": {}, "sub_config": None, "data_path": None}}
    r.update(extra)
    return typed(r)


def test_alike_records_have_nothing_named():
    assert unlike(rec(), rec("ros2")) == []


@pytest.mark.parametrize("other, named", [
    (rec("iceoryx", transport="shm"), "shared memory vs zero-copy loan"),
    (rec(transport="udp"), "shared memory vs network transport"),
    (rec(wait="spin"), "blocking wait vs busy-poll"),
    (rec(qos={"async": True}), "sync vs async publishing"),
    (rec("ros2", qos={"async": False, "receive": "listener"}), "waitset vs listener receive"),
    (rec("ros2", adapter={"versions": {"fastdds": "2.14.5", "rcl": "9.2"}}), "fastdds 2.9.1 vs 2.14.5"),
])
def test_each_difference_is_named(other, named):
    assert named in unlike(rec(), other)


def test_socket_buffers_from_each_adapters_words():
    cyclone = rec("cyclonedds", adapter={"config": {"xml": '<SocketReceiveBufferSize min="default" max="4MiB"/>'}})
    # the raw sockets' is getsockopt's, twice what they set (socket(7)): 4 MiB set reads back as 8 MiB
    udp = rec("udp", adapter={"config": {"so_rcvbuf": 8388608}})
    small_udp = rec("udp", adapter={"config": {"so_rcvbuf": 2 * 2 ** 20}})
    connext = rec("connext", adapter={"config": {"xml": "<name>dds.transport.UDPv4.builtin.recv_socket_buffer_size"
                                                        "</name><value>2097152</value>"}})
    fastdds = rec(adapter={"config": {"udp_receive_buffer": 4194304}})
    ros2 = rec("ros2", adapter={"config": {"confinement": "Fast DDS profile: <dds><transport_descriptor><type>UDPv4"
                                                          "</type><receiveBufferSize>1048576</receiveBufferSize>"}})
    assert traits(cyclone)["socket buffer"] == 4 * 2 ** 20
    assert traits(connext)["socket buffer"] == 2 * 2 ** 20
    assert traits(udp)["socket buffer"] == 4 * 2 ** 20
    assert traits(fastdds)["socket buffer"] == 4 * 2 ** 20 and traits(ros2)["socket buffer"] == 2 ** 20
    # the same 4 MiB asked of the kernel: alike (the read-back 8 MiB is not a difference)
    assert not any("socket" in d for d in unlike(cyclone, udp) + unlike(fastdds, udp))
    assert "socket receive buffer 4 MiB vs 1 MiB" in unlike(cyclone, small_udp)
    assert "socket receive buffer 4 MiB vs 1 MiB" in unlike(fastdds, ros2)
    assert not any("socket" in d for d in unlike(rec(), udp))  # a configuration that names none: not compared


def test_an_imported_records_path_is_not_guessed():
    imported = rec("cyclonedds", transport=None, source={"tool": "perftest", "file": "perftest.txt"})
    assert traits(imported)["path"] is None and traits(imported)["transport"] is None
    assert unlike(imported, rec("iceoryx", transport="shm")) == []


def test_reused_agents_and_fresh_ones_are_unlike():
    pair = {"pair": 1, "point": 2, "opened_for_bytes": 4096}
    assert unlike(rec(), rec(reuse=pair)) == ["fresh agents vs reused agents"]
    assert unlike(rec(reuse=pair), rec(reuse={**pair, "point": 0})) == []
    assert traits(rec(reuse=None))["agents"] == "fresh agents"
    assert traits(rec(source={"tool": "perftest", "file": "perftest.txt"}, reuse=pair))["agents"] is None  # imported: not known
