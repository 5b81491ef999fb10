"""Like for like: what a record's numbers were measured through, so that a
pairing of two records that measure unlike things is flagged with the
difference named (``compare``, the report, the tables).

A record's traits:

* ``path``: how the data moved between the processes: ``loan`` (zero-copy:
  the reader reads the writer's shared memory in place), ``shm`` (through
  shared memory: zenoh's SHM buffers, a DDS shared-memory transport, which
  copies in and out of its segments), ``copy`` (through the network stack), as the
  middleware tells it where it can (``adapter.data_path``: zenoh's shared
  memory counters, iceoryx/iceoryx2 loans), else from the adapter and the
  transport in force (``adapter.zero_copy.source`` says which);
* ``transport``: shared memory (``loan``, ``shm``) or network;
* ``wait``: busy-poll (spin) or blocking wait;
* ``receive``: how the middleware hands a sample over (``qos.receive`` in
  force: a listener on the middleware's thread, a waitset or read loop on the
  agent's: a thread switch apart, a large part of a small sample's latency);
* ``publishing``: synchronous or asynchronous (``qos.async``, in force);
* ``versions``: every middleware library and its version;
* ``socket buffer``: the socket receive buffer the adapter asked for (raw
  sockets' SO_RCVBUF, Cyclone DDS's SocketReceiveBufferSize, Connext's
  recv_socket_buffer_size, Fast DDS's UDPv4 receiveBufferSize, as the fastdds
  adapter's configuration or ros2's Fast DDS profile says it), where the
  adapter's configuration says it. What the raw sockets record is what
  getsockopt(SO_RCVBUF) read back: Linux doubles the size set (socket(7)),
  so half of it is what was set, the figure a middleware's configuration
  names (4 MiB asked reads back as 8 MiB on both);
* ``agents``: fresh (started for the point) or an agent pair's (``reuse``,
  mwperf run --reuse-agents: opened for the pair's largest message, matched
  before the point); a record without the field had fresh agents;
* ``link``: what lay between the two sides: one host's loopback, a namespace
  pair's veth with its shaping (kind, rate, delay, jitter, loss), or two
  hosts (``ssh``, the pair's name where a lab gave one): a point over a
  100 Mbit/s link with 5 ms of delay measures the link as much as the
  middleware.
"""

from __future__ import annotations

import re
from typing import Any

from mwperf.model.parts import JsonObject
from mwperf.model.record import Record

__all__ = ["zero_copy", "path_of", "traits", "unlike", "describe_path"]

#: adapters whose every sample moves by loan, whatever the middleware reports
_LOANS = ("iceoryx", "iceoryx2")
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*([kKmMgG]i?B|B)?$")
_UNITS = {"B": 1, "kB": 1000, "KiB": 1024, "MB": 10 ** 6, "MiB": 2 ** 20, "GB": 10 ** 9, "GiB": 2 ** 30}


def _side_path(reported: Any) -> str | None:
    """A side's path as the middleware reported it (None: it cannot tell, or carried nothing)."""
    if not isinstance(reported, dict):
        return None
    path = reported.get("receive") if reported.get("receive") not in (None, "none") else reported.get("send")
    return path if path in ("loan", "shm", "copy", "shm+copy") else None


def zero_copy(mw: str, transport: str | None, one_host: bool, data_path: Any) -> dict[str, str]:
    """``{"path": loan|shm|copy|shm+copy, "source": "middleware"|"adapter"}``: the
    middleware's word (the subscriber's receive path first) where it gave one;
    otherwise the adapter's: loans for iceoryx and iceoryx2, shared memory for
    a shared-memory transport on one host (``one_host``: no link between two
    namespaces or hosts), else a copy through the network stack."""
    sides = data_path if isinstance(data_path, dict) else {}
    told = _side_path(sides.get("sub")) or _side_path(sides.get("pub"))
    if told:
        return {"path": told, "source": "middleware"}
    if mw in _LOANS:
        path = "loan"
    elif transport == "shm" or (transport == "shm+udp" and one_host):
        path = "shm"
    else:
        path = "copy"
    return {"path": path, "source": "adapter"}


def describe_path(path: str | None) -> str:
    return {"loan": "zero-copy loan", "shm": "shared memory", "copy": "copy (network stack)",
            "shm+copy": "shared memory, partly copied"}.get(path or "", "unknown")


def _bytes(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return int(value) if value > 0 else None
    match = _SIZE.match(str(value).strip()) if isinstance(value, str) else None
    return int(float(match.group(1)) * _UNITS[match.group(2) or "B"]) if match else None


def _socket_buffer(config: JsonObject | None) -> int | None:
    """The socket receive buffer an adapter's configuration names (None: it names none)."""
    if config is None:
        return None
    if "so_rcvbuf" in config:  # getsockopt's: twice what was set (socket(7))
        got = _bytes(config["so_rcvbuf"])
        return None if got is None else got // 2
    if "udp_receive_buffer" in config:  # the fastdds adapter's UDPv4 transport
        return _bytes(config["udp_receive_buffer"])
    for text in (v for v in config.values() if isinstance(v, str)):
        found = re.search(r'SocketReceiveBufferSize[^>]*max="([^"]+)"', text) or \
            re.search(r"recv_socket_buffer_size</name>\s*<value>(\d+)<", text) or \
            re.search(r"<receiveBufferSize>(\d+)</receiveBufferSize>", text)
        if found:
            return _bytes(found.group(1))
    return None


def path_of(r: Record) -> str | None:
    """Which path the record's samples took (None: an imported point, not known)."""
    if r.adapter.zero_copy is not None:
        return r.adapter.zero_copy.path
    if r.imported:
        return None
    return zero_copy(r.mw, r.transport, r.link is None, r.adapter.data_path)["path"]  # a record from before it


def _link(r: Record) -> str | None:
    """The link as a like-for-like trait: ``loopback``, ``netns gige (1000 Mbit/s)``, ``netns (rate 100 Mbit/s,
    delay 5 ms, loss 1 %)``, ``two hosts (ssh)``; None for an imported point (not known)."""
    if r.imported:
        return None
    link = r.link
    if link is None or link.kind in (None, "none"):
        return "loopback"
    if link.kind == "ssh":
        return "two hosts (ssh)"
    parts = [f"rate {link.rate_mbit:g} Mbit/s" if link.rate_mbit else None,
             f"delay {link.delay_ms:g} ms" if link.delay_ms else None,
             f"jitter {link.jitter_ms:g} ms" if link.jitter_ms else None,
             f"loss {link.loss_pct:g} %" if link.loss_pct else None]
    shaped = ", ".join(p for p in parts if p)
    return f"{link.kind} ({shaped})" if shaped else f"{link.kind} (unshaped)"


def traits(r: Record) -> dict[str, Any]:
    """What the record was measured through (see the module's text)."""
    path = path_of(r)
    publishing = r.qos("async")
    receive = r.qos("receive")
    return {
        "path": path,
        "transport": None if path is None else "network" if path == "copy" else "shared memory",
        "wait": {"spin": "busy-poll", "block": "blocking wait"}.get(r.wait or ""),
        "publishing": None if publishing is None else "async" if publishing else "sync",
        "receive": receive if isinstance(receive, str) else None,
        "versions": dict(r.adapter.versions or {}),
        "socket buffer": _socket_buffer(r.adapter.sub_config) or _socket_buffer(r.adapter.config),
        "agents": None if r.imported else "reused agents" if r.reuse is not None else "fresh agents",
        "link": _link(r),
    }


def _mib(n: int) -> str:
    return f"{n / 2 ** 20:g} MiB" if n % 2 ** 20 == 0 else f"{n} B"


def unlike(a: Record, b: Record) -> list[str]:
    """The differences that make a pairing of ``a`` with ``b`` unlike, each
    named (``copy vs zero-copy loan``, ``fastdds 2.9.1 vs 2.14.2``); empty
    when nothing known differs. A trait unknown on either side is not compared."""
    ta, tb = traits(a), traits(b)
    out = []
    if ta["path"] and tb["path"] and ("loan" in (ta["path"], tb["path"])) and ta["path"] != tb["path"]:
        out.append(f"{describe_path(ta['path'])} vs {describe_path(tb['path'])}")
    for key in ("transport", "wait", "publishing", "receive"):
        if ta[key] and tb[key] and ta[key] != tb[key]:
            out.append(f"{ta[key]} vs {tb[key]}" + (" transport" if key == "transport" else
                                                    " publishing" if key == "publishing" else
                                                    " receive" if key == "receive" else ""))
    for lib in sorted(set(ta["versions"]) & set(tb["versions"])):
        if ta["versions"][lib] != tb["versions"][lib]:
            out.append(f"{lib} {ta['versions'][lib]} vs {tb['versions'][lib]}")
    if ta["agents"] and tb["agents"] and ta["agents"] != tb["agents"]:
        out.append(f"{ta['agents']} vs {tb['agents']}")
    if ta["link"] and tb["link"] and ta["link"] != tb["link"]:
        out.append(f"link {ta['link']} vs {tb['link']}")
    sa, sb = ta["socket buffer"], tb["socket buffer"]
    if sa and sb and sa != sb:
        out.append(f"socket receive buffer {_mib(sa)} vs {_mib(sb)}")
    return out
