"""The one Placement interface: which one the options choose, and what each
makes of an agent's argument list (no namespace is created here)."""

from pathlib import Path

from conftest import described, run_request
from mwperf.execute.netns import NetnsPair
from mwperf.execute.placement import Local
from mwperf.execute.point import agent_argv, placement_for
from mwperf.execute.ssh import SshHosts
from mwperf.plan.validate import build_run_options
from mwperf.plan.where import parse_link


def opts(**options):
    return build_run_options(run_request(out="results/x", **options), described(), cpu_count=2)


def test_options_choose_the_placement():
    assert isinstance(placement_for(opts(mw="udp"), 0), Local)
    assert isinstance(placement_for(opts(mw="udp", link="netns:gige"), 3), NetnsPair)
    assert isinstance(placement_for(opts(mw="udp", hosts="pub=a@10.0.0.1,sub=b@10.0.0.2"), 0), SshHosts)


def test_local_runs_the_agent_as_it_is():
    local = Local()
    with local as place:
        assert place.wrap("pub", ["agent", "run"]) == ["agent", "run"]
        assert place.as_dict() is None and place.same_clock and not place.two_hosts


def test_netns_pair_runs_each_role_in_its_namespace_with_its_addresses():
    pair = NetnsPair(parse_link("netns:gige"), 4)
    pub, sub = pair.wrap("pub", ["agent"]), pair.wrap("sub", ["agent"])
    assert pub[:4] == ["ip", "netns", "exec", pair.ns[0]] and sub[:4] == ["ip", "netns", "exec", pair.ns[1]]
    assert pub[pub.index("--host") + 1] == pair.addr[1] == sub[sub.index("--host") + 1]
    assert pub[pub.index("--peer") + 1] == pair.addr[1] and sub[sub.index("--peer") + 1] == pair.addr[0]
    assert pair.as_dict()["profile"] == "gige" and pair.two_hosts and pair.name == "gige"


def test_between_hosts_a_shared_memory_default_becomes_udp():
    options = opts(mw="fastdds", size="64")
    point = options.points()[0]
    assert "--transport" not in agent_argv("A", "pub", point, options, 0)
    argv = agent_argv("A", "pub", point, options, 0, two_hosts=True)
    assert argv[argv.index("--transport") + 1] == "udp"
    assert Path(argv[argv.index("--samples-out") + 1]).name == "00000.i64"
