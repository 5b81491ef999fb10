"""Records of the builds of one middleware for the versions tests: a fixture
record (fastdds, latency, 1 KiB, reliable, udp) as another build, with the
library versions its adapter names first and the configuration given."""

import copy
import json

from conftest import FIXTURES
from synthetic import measured_stats

#: (adapter, its library and version as its records name them first)
BUILDS = {"cyclonedds": ("cyclonedds", "0.10.2"), "cyclonedds11": ("cyclonedds", "11.0.1"),
          "fastdds": ("fastdds", "2.9.1"), "fastdds-jazzy": ("fastdds", "2.14.5"), "fastdds3": ("fastdds", "3.2.2"),
          "ros2": ("rcl", "9.2.8"), "ros2-kilted": ("rcl", "10.1.3"), "udp": None}


def template():
    line = (FIXTURES / "results-extended.jsonl").read_text().splitlines()[2]  # fastdds latency 1 KiB reliable udp
    return json.loads(line)


def record(mw, p50=50.0, size=1024, mode="latency", rate=1000.0, repetition=None, **config):
    r = copy.deepcopy(template())
    r["mw"] = r["adapter"]["name"] = mw
    lib = BUILDS[mw]
    r["adapter"]["versions"] = {lib[0]: lib[1], "fastcdr": "2.3.3"} if lib else {}
    r["adapter"]["config"] = {"transport": "udp", "history": "keep-last:10", "topic_out": f"rt/mwperf_data_{mw}",
                              **config}
    r["adapter"]["sub_config"] = None
    r["size"], r["mode"], r["repetition"] = size, mode, repetition
    r["latency_us"] = measured_stats(r["latency_us"], p50=p50, p50_ci=[p50 * 0.99, p50 * 1.01])
    r["samples_per_s"] = rate
    return r
