"""Tables across points, in the same :class:`~mwperf.export.sections.Section`
form as the result tables (so text, Markdown and HTML render them alike):

* the **ranges**: one row per middleware, QoS and mode, the ranges of
  p50 / p99 latency, the best throughput, the worst loss and the CPU (the
  headline, what to look at first, ranks them at each size:
  :mod:`mwperf.export.ranking`);
* **ROS overhead**: ``ros2`` next to the Fast DDS adapter on the Fast DDS
  it runs on (``fastdds-jazzy``, the ROS 2 wheels' 2.14) and ``ros1`` next to
  ``tcp`` at the same mode, size, rate, reliability and placement, with the
  ratios (what the ROS layer costs);
* **fan-out**: latency (median and worst subscriber) and loss against the
  number of subscribers;
* **cross-vendor**: p50 and loss as publisher x subscriber matrices
  (:mod:`mwperf.export.interop`);
* **security**: each DDS Security level against none, as ratios
  (:mod:`mwperf.export.security`);
* **threads**: CPU per thread group and side, mwperf's own threads apart
  from the middleware's;
* **like for like** (:mod:`mwperf.export.like_for_like`): where a mode's
  rows were measured through different things (data path, wait, publishing,
  versions, socket buffers).

Each appears only when the records hold what it needs.
"""

from __future__ import annotations

import statistics
from typing import Iterable

from mwperf.export.interop import interop
from mwperf.export.security import security
from mwperf.export.launches import launch_sections
from mwperf.export.versions import version_sections
from mwperf.export.like_for_like import like_for_like
from mwperf.export.max_rate import max_rate_sections
from mwperf.export.sections import Row, Section, section_key
from mwperf.model.fairness import unlike
from mwperf.model.labels import qos_label, subscribers_label
from mwperf.model.parts import ThreadGroup
from mwperf.model.record import Record
from mwperf.units import format_rate_hz, format_size

__all__ = ["ranges", "ros_overhead", "fanout", "threads", "summaries", "ROS_PAIRS"]

#: (the ROS layer, the bases it may be compared with, the base's transport for
#: each of the ROS layer's, the middleware whose version both must share): ros2
#: over the Fast DDS adapter on the Fast DDS its rmw runs on: fastdds-jazzy, the
#: wheels' 2.14 as rmw_fastrtps_cpp's (the Debian fastdds adapter, 2.9, is paired
#: only should it be the same version, and else shown as not compared, with both
#: versions), on the same transport; ros1's tcpros (Nagle on) over tcp-nagle and
#: tcpros-nodelay over tcp (TCP_NODELAY).
ROS_PAIRS = (("ros2", ("fastdds-jazzy", "fastdds"), {"shm+udp": "shm+udp", "udp": "udp", "shm": "shm"}, "fastdds"),
             ("ros1", ("tcp",), {"tcpros": "tcp-nagle", "tcpros-nodelay": "tcp"}, None))


def _median(values: Iterable) -> float | None:
    vals = [v for v in values if isinstance(v, (int, float))]
    return statistics.median(vals) if vals else None


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _range(values: list, digits: int = 1) -> str:
    vals = [v for v in values if isinstance(v, (int, float))]
    if not vals:
        return "-"
    lo, hi = min(vals), max(vals)
    return _num(lo, digits) if f"{lo:.{digits}f}" == f"{hi:.{digits}f}" else f"{lo:.{digits}f}-{hi:.{digits}f}"


def _sizes(records: list[Record]) -> str:
    sizes = sorted({r.size for r in records})
    return format_size(sizes[0]) if len(sizes) == 1 else f"{format_size(sizes[0])}-{format_size(sizes[-1])}"


RANGES_HEADERS = ["Middleware", "Mode", "QoS", "Points", "Sizes", "p50 (us)", "p99 (us)", "Mbit/s (max)",
                    "Lost % (max)", "CPU pub/sub (%)", "CPU pub/sub (us/msg)"]


def ranges(records: list[Record]) -> list[Section]:
    """One row per middleware, QoS and mode: ranges over its sizes and rates."""
    groups: dict[tuple, list[Record]] = {}
    for r in records:
        groups.setdefault((r.pair_name, r.mode, section_key(r)), []).append(r)
    if not groups:
        return []
    section = Section("", "ranges", "ranges: each middleware, QoS and mode over the sizes and rates measured "
                                    "(latency one-way), and its CPU", list(RANGES_HEADERS), left=(0, 1, 2, 3, 4))
    for (mw, mode, _), members in groups.items():
        ok = [r for r in members if r.ok]
        failed = len(members) - len(ok)
        points = f"{len(ok)} ok" + (f", {failed} failed" if failed else "")
        qos = qos_label(members[0])
        section_title = members[0].source_section
        if section_title:
            qos = f"{qos}; {section_title}" if qos else section_title
        fan = sorted({r.subscribers for r in members})
        if fan != [1]:
            label = subscribers_label(fan, members[0].subscribers_as)
            qos = f"{qos}; {label}" if qos else label
        mbps = [r.mbps for r in ok if r.mbps is not None]
        loss = [100 * r.loss_rate for r in ok if r.loss_rate is not None]
        cpu = [_median(r.cpu_pct.side(side) for r in ok) for side in ("pub", "sub")]
        per_msg = [_median(r.cpu_us_per_msg.side(side) for r in ok) for side in ("pub", "sub")]
        section.rows.append(Row([
            mw, mode, qos or "-", points, _sizes(members),
            _range([r.stat("p50") for r in ok]), _range([r.stat("p99") for r in ok]),
            _num(max(mbps) if mbps else None), _num(max(loss) if loss else None, 2),
            "-" if cpu == [None, None] else f"{_num(cpu[0], 0)}/{_num(cpu[1], 0)}",
            "-" if per_msg == [None, None] else f"{_num(per_msg[0], 1)}/{_num(per_msg[1], 1)}"]))
    return [section]


ROS_HEADERS = ["Mode", "Size", "Hz", "Reliability", "Placement", "p50 ROS (us)", "p50 base (us)", "p50 ratio",
               "S/s ROS", "S/s base", "S/s ratio", "Unlike (ROS vs base)"]
ROS_REFUSED_HEADERS = ["ROS layer", "Base", "Not compared: why"]


def _placement(r: Record) -> str:
    cpu = r.cpu
    pins = "" if cpu.pub is None or cpu.sub is None else f" {cpu.pub},{cpu.sub}"
    return f"{cpu.placement or '-'}{pins}"


def _ros_key(r: Record) -> tuple:
    return r.mode, r.size, r.rate_hz, r.reliability, _placement(r), r.wait, r.subscribers


def _version(r: Record, middleware: str | None) -> str | None:
    """The version of `middleware` a point ran on: the record's ``adapter.versions``
    (a version-1 record's are worked out when it is read, mwperf.model.upgrade)."""
    versions = r.adapter.versions
    if middleware is None or versions is None or not versions.get(middleware):
        return None
    return versions[middleware]


def _ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or not b else f"{a / b:.2f}"


def ros_overhead(records: list[Record]) -> list[Section]:
    """For each (ROS, base) pair measured at the same points, on the same
    version of the middleware underneath and the matching transport: p50
    latency and samples/s side by side, and ROS / base (medians over
    repetitions). Points on another version or transport are never paired:
    a last table names each pair not compared and why; each table's title
    names the pair it compares, and each row what else differs (fairness.unlike)."""
    ok = [r for r in records if r.ok and not r.imported]
    sections = []
    refused = Section("ros", "ros-overhead-refused", "ROS overhead: pairs not compared (a ROS layer and a base on "
                                                      "another transport or version)", list(ROS_REFUSED_HEADERS),
                      left=(0, 1, 2))
    for ros, bases, transports, underneath in ROS_PAIRS:
        mine: dict[tuple, dict[tuple, list[Record]]] = {}  # (base transport, version) -> point -> records
        pair: tuple[str | None, str | None]
        for r in ok:
            if r.mw == ros and r.transport in transports:
                pair = (transports[r.transport], _version(r, underneath))
                mine.setdefault(pair, {}).setdefault(_ros_key(r), []).append(r)
        for base in bases:
            theirs: dict[tuple, dict[tuple, list[Record]]] = {}
            for r in ok:
                if r.mw == base:
                    pair = (r.transport, _version(r, underneath))
                    theirs.setdefault(pair, {}).setdefault(_ros_key(r), []).append(r)
            for pair in sorted(set(mine) & set(theirs), key=str):
                section = _ros_section(ros, base, pair, mine[pair], theirs[pair], underneath)
                if section.rows:
                    sections.append(section)
            refused.rows += _ros_refused(ros, base, transports, underneath, mine, theirs)
    return sections + ([refused] if refused.rows else [])


def _ros_refused(ros: str, base: str, transports: dict, underneath: str | None, mine: dict, theirs: dict) -> list[Row]:
    """Each ROS layer's (transport, version) without its base next to each base
    measured on another transport or version: named, with the difference."""
    rows = []
    for ros_pair in sorted(set(mine) - set(theirs), key=str):
        ros_transport = next(iter(mine[ros_pair].values()))[0].transport
        for base_pair in sorted(theirs, key=str):
            why = []
            if base_pair[0] != ros_pair[0]:
                why.append(f"transport: {ros}'s {ros_transport} pairs with {base}'s {ros_pair[0]}, not {base_pair[0]}")
            if base_pair[1] != ros_pair[1]:
                why.append(f"{underneath} version: {ros} runs on {ros_pair[1] or 'unknown'}, {base} on "
                           f"{base_pair[1] or 'unknown'}")
            on = lambda v: f", {underneath} {v or 'unknown'}" if underneath else ""  # noqa: E731
            rows.append(Row([f"{ros} ({ros_transport}{on(ros_pair[1])})", f"{base} ({base_pair[0]}{on(base_pair[1])})",
                             "; ".join(why)]))
    return rows


def _ros_section(ros: str, base: str, pair: tuple, mine: dict, theirs: dict, underneath: str | None) -> Section:
    base_transport, version = pair
    ros_transport = next(iter(mine.values()))[0].transport
    on = f", {underneath} {version}" if underneath else ""
    section = Section(ros, "ros-overhead", f"ROS overhead: {ros} ({ros_transport}{on}) over {base} "
                                           f"({base_transport}{on}) (what the ROS layer costs; ratio = {ros} / "
                                           f"{base}, medians over repetitions)", list(ROS_HEADERS), left=(0, 3, 4, 11))
    for key in sorted(set(mine) & set(theirs), key=lambda k: (k[0], k[1], k[2] or 0, str(k[3]), k[4])):
        mode, size, rate, reliability, placement, _, _ = key
        la = _median(r.stat("p50") for r in mine[key])
        lb = _median(r.stat("p50") for r in theirs[key])
        ta = _median(r.samples_per_s for r in mine[key])
        tb = _median(r.samples_per_s for r in theirs[key])
        differ = unlike(mine[key][0], theirs[key][0])
        section.rows.append(Row([mode, str(size), format_rate_hz(rate) if rate else "-", reliability or "-",
                                 placement, _num(la), _num(lb), _ratio(la, lb), _num(ta, 0), _num(tb, 0),
                                 _ratio(ta, tb), "; ".join(differ) or "-"]))
    return section


FANOUT_HEADERS = ["Subscribers", "p50 median (us)", "p50 worst (us)", "p99 median (us)", "p99 worst (us)",
                  "Lost % median", "Lost % worst", "Lost % spread", "CPU sub (%)"]


def _fan(r: Record, field: str, which: str) -> float | None:
    """A fan-out figure of the point; the classic point (one subscriber) is
    its own median and worst."""
    spread = None if r.fanout is None else r.fanout.figure(field)
    if spread is not None:
        return {"worst": spread.worst, "median": spread.median, "spread": spread.spread}[which]
    if which == "spread":
        return 0.0 if r.subscribers == 1 and r.loss_rate is not None else None
    return {"latency_p50_us": r.stat("p50"), "latency_p99_us": r.stat("p99"), "loss_rate": r.loss_rate}[field]


def _sub_cpu(r: Record) -> float | None:
    """CPU % of every subscriber process, each once; one subscriber: its own."""
    return r.fanout.cpu_pct if r.fanout is not None else r.cpu_pct.sub


def fanout(records: list[Record]) -> list[Section]:
    """Latency and loss against the number of subscribers, one table per
    middleware, QoS, mode, size, rate and way of running the subscribers
    (processes or threads) that was measured with more than one. CPU sub is
    every subscriber process's, each once (as threads: the one process)."""
    ok = [r for r in records if r.ok]
    groups: dict[tuple, list[Record]] = {}
    for r in ok:
        how = r.subscribers_as if r.subscribers > 1 else None  # one subscriber is the baseline of both
        key = (r.pair_name, qos_label(r), r.mode, r.size, r.rate_hz, r.demand)
        for each in ((how,) if how else ("processes", "threads")):
            groups.setdefault((*key, each), []).append(r)
    sections = []
    for (mw, qos, mode, size, rate, demand, how), members in groups.items():
        counts = sorted({r.subscribers for r in members})
        if counts == [1]:
            continue
        where = f"{format_size(size)}" + (f" {format_rate_hz(rate)} Hz" if rate else "") + \
            (f" demand {demand}" if demand else "")
        section = Section(mw, "fanout", f"fan-out: {mw} {mode} {where}{f' ({qos})' if qos else ''}, "
                                        f"subscribers as {how} "
                                        "(latency in us over the subscribers; loss in %)", list(FANOUT_HEADERS))
        for n in counts:
            at = [r for r in members if r.subscribers == n]

            def pct(v):
                return None if v is None else 100 * v
            section.rows.append(Row([
                str(n),
                _num(_median(_fan(r, "latency_p50_us", "median") for r in at)),
                _num(_median(_fan(r, "latency_p50_us", "worst") for r in at)),
                _num(_median(_fan(r, "latency_p99_us", "median") for r in at)),
                _num(_median(_fan(r, "latency_p99_us", "worst") for r in at)),
                _num(pct(_median(_fan(r, "loss_rate", "median") for r in at)), 2),
                _num(pct(_median(_fan(r, "loss_rate", "worst") for r in at)), 2),
                _num(pct(_median(_fan(r, "loss_rate", "spread") for r in at)), 2),
                _num(_median(_sub_cpu(r) for r in at), 0)]))
        sections.append(section)
    return sections


THREAD_HEADERS = ["Side", "Thread group", "Whose", "Threads", "CPU % (median)", "CPU % (max)", "Points"]


def thread_groups(records: list[Record]) -> dict[tuple, dict[tuple, list[ThreadGroup]]]:
    """{(mw, QoS): {(side, group name, own): [the group's entries, one a point]}}."""
    out: dict[tuple, dict[tuple, list[ThreadGroup]]] = {}
    for r in records:
        if not r.ok:
            continue
        for side in ("pub", "sub"):
            for group in r.threads.side(side) or ():
                out.setdefault((r.pair_name, qos_label(r)), {}).setdefault(
                    (side, group.name, group.own), []).append(group)
    return out


def threads(records: list[Record]) -> list[Section]:
    """CPU per thread group and side (medians over the points), mwperf's own
    threads (registered by thread id) first, then the middleware's."""
    sections = []
    for (mw, qos), groups in thread_groups(records).items():
        section = Section(mw, "threads", f"threads: {mw}{f' ({qos})' if qos else ''} (CPU % of one core over "
                                         "the measured window, per thread group)", list(THREAD_HEADERS), left=(0, 1, 2))
        for (side, name, own), entries in sorted(groups.items(), key=lambda kv: (kv[0][0] != "pub", not kv[0][2],
                                                                                   kv[0][1])):
            pcts = [e.cpu_pct for e in entries if e.cpu_pct is not None]
            section.rows.append(Row([side, str(name), "mwperf" if own else "middleware",
                                     _num(_median(e.threads for e in entries), 0),
                                     _num(_median(pcts)), _num(max(pcts) if pcts else None), str(len(entries))]))
        sections.append(section)
    return sections


def summaries(records: list[Record]) -> list[Section]:
    """Every cross-point table the records support (the ranges apart)."""
    return (like_for_like(records) + ros_overhead(records) + interop(records) + security(records)
            + fanout(records) + threads(records)
            + launch_sections(records) + version_sections(records) + max_rate_sections(records))
