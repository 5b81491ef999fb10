"""The one session protocol (mwperf.execute.session): a point, an agent
pair's point (--reuse-agents) and a scenario's flow take the same steps and
the same checks. The fake agent's reader threads report in reverse order
(their ``reader`` index says which is which), or all claim reader 0
(``sub-twice``): every path must put each result in its reader's slot and
refuse a reader answering twice."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from execute.test_runner import FAST, options
from mwperf.execute.agent import describe
from mwperf.execute.keeper import ServiceKeeper
from mwperf.execute.pair import Pairs
from mwperf.execute.point import run_point
from mwperf.plan.options import PlannedPoint

EXECUTE = Path(__file__).resolve().parents[2] / "mwperf" / "execute"


def _point(opts, agent):
    return run_point(opts, opts.points()[0], agent, FAST)


def _pair(opts, agent):
    job = PlannedPoint(opts, opts.points()[0])
    pairs = Pairs([job], ServiceKeeper(), reuse=True)
    try:
        return pairs.run(job, agent, FAST)
    finally:
        pairs.close()


PATHS = {"point": _point, "agent pair": _pair}


@pytest.mark.parametrize("path", PATHS)
def test_each_readers_result_fills_its_slot(tmp_path, fake_agent, path):
    opts = options(tmp_path, mw="dds", mode="rate", rate="100", subscribers="3", subscribers_as="threads",
                   agent_info=describe(str(fake_agent)))
    outcome = PATHS[path](opts, str(fake_agent))
    assert outcome.error is None
    assert [s["reader"] for s in outcome.subs] == [0, 1, 2] and outcome.sub is outcome.subs[0]


@pytest.mark.parametrize("path", PATHS)
def test_a_reader_answering_twice_fails_the_point(tmp_path, fake_agent, monkeypatch, path):
    monkeypatch.setenv("FAKE_AGENT_FAULT", "sub-twice")
    opts = options(tmp_path, mw="dds", mode="rate", rate="100", subscribers="3", subscribers_as="threads",
                   agent_info=describe(str(fake_agent)))
    outcome = PATHS[path](opts, str(fake_agent))
    assert outcome.error == "sub: two results for reader 0"


def test_the_protocols_steps_are_written_in_the_session_alone():
    """`go`, `stop` and `close` reach an agent from mwperf.execute.session only: a path that writes
    them itself has a protocol of its own again."""
    steps = {"go", "stop", "close"}
    found = []
    for path in sorted(EXECUTE.glob("*.py")):
        if path.name == "session.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and any(isinstance(a, (ast.Constant, ast.JoinedStr)) for a in node.args):
                for arg in node.args:
                    text = arg.value if isinstance(arg, ast.Constant) else \
                        "".join(v.value for v in arg.values if isinstance(v, ast.Constant)) \
                        if isinstance(arg, ast.JoinedStr) else None
                    if isinstance(text, str) and text.split(" ")[0] in steps:
                        found.append(f"{path.name}:{node.lineno}: {text!r}")
    assert found == []


def test_participants_are_stopped_one_at_a_time_each_after_the_one_before_exited(tmp_path):
    """Issue 45.15: a ROS 2 participant outlived its deadline (killed: exit code None) when every participant
    was stopped at once: rmw_fastrtps's teardown busy-waits, holding the participant's listener mutex, for a
    discovery callback that the peers' endpoints leaving at that moment had started (gdb: set_listener(nullptr)
    against onWriterDiscovery). Ground truth here: each participant writes when it read `stop` and when it
    exits; the next one reads its `stop` only after the one before has gone, and a stuck one is given its
    deadline and reported None without holding the rest up past theirs."""
    import sys as _sys
    import time as _time

    from mwperf.execute.process import AgentProcess
    from mwperf.execute.session import participants_stop

    script = ("import sys, time\n"
              "log = open(sys.argv[1], 'a')\n"
              "print('{\"event\": \"ready\"}', flush=True)\n"
              "for line in sys.stdin:\n"
              "    if line.strip() == 'stop':\n"
              "        log.write(f'stop {sys.argv[2]} {time.monotonic()}\\n'); log.flush()\n"
              "        time.sleep(float(sys.argv[3]))\n"
              "        log.write(f'exit {sys.argv[2]} {time.monotonic()}\\n'); log.flush()\n"
              "        sys.exit(0)\n")
    log = tmp_path / "log"
    delays = [0.3, 0.3, 30.0, 0.3]  # the third one hangs
    parts = [AgentProcess([_sys.executable, "-c", script, str(log), str(i), str(d)], f"participant {i}")
             for i, d in enumerate(delays)]
    try:
        for p in parts:  # started (an interpreter each, slow on a loaded machine) before the stop is timed
            assert p.wait_for({"ready"}, _time.monotonic() + 30) is not None
        started = _time.monotonic()
        codes = participants_stop(parts, 1.0)
        took = _time.monotonic() - started
    finally:
        for p in parts:
            p.kill()
    assert codes == [0, 0, None, 0]
    events = [line.split() for line in log.read_text().splitlines()]
    at = {(kind, int(i)): float(t) for kind, i, t in events}
    assert at[("stop", 1)] >= at[("exit", 0)] and at[("stop", 3)] >= at[("stop", 2)] + 1.0
    assert ("exit", 2) not in at and took < 0.3 * 3 + 1.0 + 2.0
