"""Discovery plans (mwperf.plan.discovery_plan: a sweep plan with ``mode:
discovery``): the bundled one, and a bad one names its key."""

from pathlib import Path

import pytest

from mwperf.errors import PlanError
from mwperf.plan.discovery_plan import is_discovery_plan, load_discovery_plan

PLANS = Path(__file__).resolve().parents[3] / "plans"


def test_the_bundled_plan():
    assert is_discovery_plan(PLANS / "discovery.yaml") and not is_discovery_plan(PLANS / "quick.yaml")
    assert load_discovery_plan(PLANS / "discovery.yaml") == {
        "mw": "cyclonedds,fastdds,zenoh,ros2", "discovery": "default,tuned", "participants": "2,5,10,20",
        "topics": "1,10", "link": "netns", "timeout": "60s"}
    assert load_discovery_plan(PLANS / "discovery-wifi.yaml") == {
        "mw": "cyclonedds,fastdds,zenoh,ros2", "discovery": "default,tuned", "participants": "5,10,20",
        "topics": "1", "link": "netns:wifi", "timeout": "60s"}


@pytest.mark.parametrize("text, expected", [
    ("mode: discovery\npeers: [2]\n", "peers: not a key of a discovery plan"),
    ("mode: discovery\ntopics: []\n", "topics: []: expected a value or a list of values"),
    ("mode: [latency, discovery]\n", "discovery goes in a plan of its own"),
    ("[2]\n", "a plan is a mapping"),
])
def test_bad_plans_name_the_key(tmp_path, text, expected):
    path = tmp_path / "d.yaml"
    path.write_text(text)
    with pytest.raises(PlanError) as err:
        load_discovery_plan(path)
    assert expected in str(err.value), str(err.value)
