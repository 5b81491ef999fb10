"""The discovery tables (mwperf.export.discovery) as text and Markdown, golden."""

from conftest import check_golden
from mwperf.export.discovery import discovery_sections
from mwperf.export.tables import render_markdown, render_text

LINK = {"kind": "netns", "profile": "none", "rate_mbit": None, "loss_pct": 0.0, "delay_ms": 0.0, "jitter_ms": 0.0,
        "clock_offset_s": 0}


def record(n: int, t: int, **kw) -> dict:
    r = {"mw": "cyclonedds", "version": "0.10.2", "discovery": "default", "participants": n, "topics": t,
         "link": LINK, "complete": True, "time_to_match_ms": 12.5 * n, "time_to_first_sample_ms": 20.25 * n,
         "remote_pairs": n * (n - 1) * t, "pairs_expected": n * (n - 1) * t, "cpu_ms": [4.0, 6.0] * (n // 2),
         "rss_kb": [8192] * n, "traffic": {"udp": {"packets": 40 * n, "bytes": 9000 * n},
                                           "metatraffic_ports": {"packets": 30 * n, "bytes": 7500 * n}}}
    r.update(kw)
    return r


RECORDS = [record(4, 1), record(2, 1), record(2, 10, complete=False, time_to_first_sample_ms=None),
           {"mw": "cyclonedds", "discovery": "default", "participants": 8, "topics": 1, "link": LINK,
            "error": "participant 3: cyclonedds: create participant: Error"},
           record(2, 1, mw="fastdds", version="2.9.1", discovery="unicast", link=None, traffic=None),
           # Zenoh through a router: its TCP sessions counted with the UDP (none there), and on their own
           record(4, 1, mw="zenoh", version="1.10.2", discovery="tuned",
                  traffic={"udp": {"packets": 0, "bytes": 0}, "metatraffic_ports": {"packets": 0, "bytes": 0},
                           "tcp": {"packets": 70, "bytes": 6900}})]


def test_discovery_tables_golden():
    sections = discovery_sections(RECORDS)
    check_golden("discovery.txt", render_text(sections))
    check_golden("discovery.md", render_markdown(sections))
