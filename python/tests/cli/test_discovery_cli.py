"""``mwperf discovery``: bad input is one line and exit 2, before anything
runs: a value outside the agent's ``discover`` rows, a multicast discovery
without a namespace pair, and (with the real agent) a middleware that has no
discovery mode, refused with the agent's reason."""

import pytest

from conftest import real_agent_path
from mwperf.cli.main import main

BAD = [
    (["--mw", "cyclonedds", "--participants", "1"], "--participants 1: must be"),
    (["--mw", "cyclonedds", "--participants", "2,x"], "--participants 2,x"),
    (["--mw", "cyclonedds", "--participants", "2", "--topics", "0"], "--topics 0: must be"),
    (["--mw", "cyclonedds", "--participants", "2", "--discovery", "gossip"], "--discovery gossip: choose from"),
    (["--mw", "cyclonedds", "--participants", "2", "--discovery", "default"],
     "--discovery default: multicasts: it runs only on a namespace pair's link (--link netns)"),
    (["--mw", "cyclonedds", "--participants", "2", "--timeout", "soon"], "--timeout soon"),
    (["--mw", "cyclonedds", "--participants", "2", "--link", "wire"], "--link wire: unknown link kind"),
]


@pytest.mark.parametrize("args, expected", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_discovery_input(capsys, monkeypatch, fake_agent, args, expected):
    monkeypatch.setenv("MWPERF_AGENT", str(fake_agent))
    code = main(["discovery", *args])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.splitlines()) == 1 and err.startswith("mwperf: error: ") and expected in err, err


@pytest.mark.e2e
@pytest.mark.side_by_side  # the agent refuses before any participant opens
def test_a_middleware_without_a_discovery_mode_is_refused(capsys, tmp_path):
    agent = real_agent_path()
    if agent is None:
        pytest.skip("the agent binary is not built yet")
    code = main(["discovery", "--agent", str(agent), "--mw", "udp", "--participants", "2", "--force"])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.splitlines()) == 1 and "--mw: 'udp' has no discovery mode in this agent yet" in err, err
