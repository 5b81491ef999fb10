"""Discovery points (:mod:`mwperf.execute.discovery`) as tables: one per
middleware and discovery configuration, a row per N x T, with the times from
the first ``go`` to the last participant matched and sampled, the pairs the
middleware matched against N x (N-1) x T, CPU and RSS per participant, and the
traffic the kernel counted on the link (namespace pairs only): UDP and TCP
together (Zenoh discovers over its TCP sessions, the DDS over UDP), TCP also
on its own, where the record has it (records before 2026-11-28 counted UDP
alone: their TCP is "-")."""

from __future__ import annotations

from statistics import mean

from mwperf.export.sections import Row, Section

__all__ = ["discovery_sections", "HEADERS", "link_counts"]

HEADERS = ["N", "T", "match ms", "first sample ms", "pairs", "CPU ms/participant", "RSS MiB/participant",
           "link pkts", "link kB", "TCP pkts", "meta-port pkts"]


def link_counts(traffic: dict) -> tuple[int, int, int | None]:
    """(packets, bytes) of UDP and TCP on the link, and TCP's packets (None: a record that counted UDP alone)."""
    tcp = traffic.get("tcp")
    tcp_packets = tcp["packets"] if isinstance(tcp, dict) else None
    tcp_bytes = tcp["bytes"] if isinstance(tcp, dict) else 0
    return traffic["udp"]["packets"] + (tcp_packets or 0), traffic["udp"]["bytes"] + tcp_bytes, tcp_packets


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _row(r: dict) -> Row:
    if r.get("error"):
        return Row([str(r["participants"]), str(r["topics"])], failure=f"FAILED: {r['error']}")
    traffic = r.get("traffic")
    counted = ["-", "-", "-", "-"]
    if traffic:
        packets, size, tcp = link_counts(traffic)
        counted = [str(packets), f"{size / 1000:.1f}", "-" if tcp is None else str(tcp),
                   str(traffic["metatraffic_ports"]["packets"])]
    cells = [str(r["participants"]), str(r["topics"]), _ms(r["time_to_match_ms"]), _ms(r["time_to_first_sample_ms"]),
             f"{r['remote_pairs']}/{r['pairs_expected']}", f"{mean(r['cpu_ms']):.1f}",
             f"{mean(r['rss_kb']) / 1024:.1f}", *counted]
    return Row(cells, note=None if r["complete"] else "incomplete at the timeout: the times are missing")


def _title(r: dict) -> str:
    link = r.get("link")
    where = f"netns:{link['profile']}, participants alternating between the two namespaces" if link else "loopback"
    threads = ", participants as threads of one process per side" if r.get("participants_as") == "threads" else ""
    return f"discovery: {r['mw']} {r.get('version', '')}, {r['discovery']} discovery ({where}){threads}"


def discovery_sections(records: list[dict]) -> list[Section]:
    """One section per (mw, discovery configuration, link, participants as processes or threads), rows in N, T
    order."""
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        groups.setdefault((r["mw"], r["discovery"], str(r.get("link")), str(r.get("participants_as"))), []).append(r)
    return [Section(rows[0]["mw"], "discovery", _title(rows[0]), HEADERS,
                    [_row(r) for r in sorted(rows, key=lambda r: (r["participants"], r["topics"]))])
            for rows in groups.values()]
