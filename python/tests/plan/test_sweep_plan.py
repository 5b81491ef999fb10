"""Plan expansion and validation: the bundled plans' dry runs (golden), the
rules of expansion, and bad plans (each error names the plan and the key)."""

import re
from pathlib import Path

import pytest

from conftest import check_golden, described
from mwperf.cli.max_rate import describe as describe_searches, plan_cells
from mwperf.errors import PlanError
from mwperf.execute.search import parse_criterion
from mwperf.plan.discovery_plan import is_discovery_plan
from mwperf.plan.scenario import is_scenario
from mwperf.plan.sweep_plan import expand, load_plan, parse_plan
from mwperf.cli.sweep import describe

PLANS = Path(__file__).resolve().parents[3] / "plans"
# The recorded description, so that the goldens do not depend on what this machine built.
AGENT = described()


def points_of(text, **kw):
    return expand(parse_plan(text, "p.yaml"), out=Path("results/x"), agent=None, agent_info=AGENT, cpu_count=2, **kw)


# Scenario files (a list of flows, plan/scenario.py) are tested in test_scenario.py.
BUNDLED = sorted(p.stem for p in PLANS.glob("*.yaml") if not is_scenario(p) and not is_discovery_plan(p))


@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_plans_dry_run(name):
    plan = load_plan(PLANS / f"{name}.yaml")
    if plan.search is not None:  # a max-rate plan: its searches
        cells = plan_cells(plan, None, AGENT, cpu_count=2)
        text = describe_searches(cells, parse_criterion(**plan.search))
        check_golden(f"plans/{name}.txt", text)
        assert text.splitlines()[-1] == f"{len(cells)} searches"
        return
    points = expand(plan, out=Path("results/x"), agent=None, agent_info=AGENT, cpu_count=2)
    text = describe(points)
    check_golden(f"plans/{name}.txt", text)
    distinct = sum(1 for p in points if not p.repetition)
    assert text.splitlines()[-1] == (f"{len(points)} points" if distinct == len(points)
                                     else f"{distinct} points, {len(points)} launches")
    assert len({p.point_hash for p in points}) == len(points)


def _hours(text: str) -> float:
    found = re.search(r"^at most about (?:(\d+)h)?(\d+)m", text, re.M)
    return int(found.group(1) or 0) + int(found.group(2)) / 60


def test_max_rate_plan_answers_the_reference_question_in_a_fraction_of_its_time(monkeypatch):
    monkeypatch.delenv("MWPERF_LAUNCHES", raising=False)  # the grid at its default launches, as the plans say
    grid = describe(expand(load_plan(PLANS / "rate-matrix.yaml"), out=Path("r"), agent=None, agent_info=AGENT,
                           cpu_count=2))
    plan = load_plan(PLANS / "max-rate.yaml")
    cells = plan_cells(plan, None, AGENT, cpu_count=2)
    searched = describe_searches(cells, parse_criterion(**plan.search))
    assert {(c.point.mw, c.point.get("reliability"), c.point.size) for c in cells} == {
        (mw, rel, 1024 << i) for mw in ("cyclonedds", "fastdds") for rel in ("best-effort", "reliable")
        for i in range(15)}
    assert "at most about 5h03m" in grid and _hours(searched) <= 3.2
    assert "at most about 3h09m" in searched  # as plans/max-rate.yaml says


def test_rate_matrix_is_the_reference_sweep():
    points = expand(load_plan(PLANS / "rate-matrix.yaml"), out=Path("r"), agent=None, agent_info=AGENT,
                    cpu_count=2)
    sizes = {p.point.size for p in points}
    rates = {p.point.rate_hz for p in points}
    assert sizes == {1024 << i for i in range(15)}
    assert rates == {10, 21, 46, 100, 215, 463, 1000, 2150, 4630, 10000, 21500}
    assert all(p.point.size * 8 * p.point.rate_hz <= 20e9 for p in points)
    assert {(p.point.mw, p.point.get("reliability")) for p in points} == {
        (mw, rel) for mw in ("cyclonedds", "fastdds") for rel in ("best-effort", "reliable")}
    assert all(p.point.get("history") == "keep-last:10" and p.point.get("duration") == 30_000_000_000 for p in points)


def test_quick_plan_runs_every_built_middleware():
    points = expand(load_plan(PLANS / "quick.yaml"), out=Path("r"), agent=None, agent_info=AGENT, cpu_count=2)
    assert {p.point.mw for p in points} == set(AGENT.adapters)


def test_burst_plan_is_seed_004s_table():
    points = expand(load_plan(PLANS / "burst.yaml"), out=Path("r"), agent=None, agent_info=AGENT, cpu_count=2)
    # payloads of 16 to 128 bytes after mwperf's 32-byte header; demands 10 to 310; 10 ms pauses
    assert {p.point.size - AGENT.header_size for p in points} == {16, 32, 64, 128}
    assert {p.point.demand for p in points} == {10, 110, 210, 310}
    assert all(p.point.mode == "burst" and p.point.get("burst-gap") == 10_000_000 for p in points)


def test_fanout_plan_goes_from_1_to_32_subscribers():
    points = expand(load_plan(PLANS / "fanout.yaml"), out=Path("r"), agent=None, agent_info=AGENT, cpu_count=2)
    assert sorted({p.point.subscribers for p in points}) == [1, 2, 4, 8, 16, 32]


def test_subscribers_as_is_a_plan_key():
    points = points_of("mw: cyclonedds\nmode: rate\nrate: 100\nsubscribers: 4\nsubscribers_as: [processes, threads]\n")
    assert [(p.point.subscribers, p.point.subscribers_as) for p in points] == [(4, "processes"), (4, "threads")]
    assert points[0].point_hash != points[1].point_hash
    # processes (the default) keeps the key of a plan written before the option
    (before,) = points_of("mw: cyclonedds\nmode: rate\nrate: 100\nsubscribers: 4\n")
    assert before.point_hash == points[0].point_hash
    limited = [n for n, a in AGENT.adapters.items() if a.limit("max_readers_per_process") == 1 and a.limit("max_subscribers") != 1]
    if limited:
        with pytest.raises(PlanError) as err:
            points_of(f"mw: {limited[0]}\nsubscribers: 2\nsubscribers_as: threads\n")
        assert str(err.value).startswith(f"p.yaml: subscribers: 2: {limited[0]} holds at most 1 reader")
        assert f"(exclude it: {{mw: {limited[0]}, subscribers: 2}})" in str(err.value)


def test_ros_plans_mirror_the_reference_studies():
    overhead = expand(load_plan(PLANS / "ros-overhead.yaml"), out=Path("r"), agent=None, agent_info=AGENT,
                      cpu_count=2)
    pairs = {(p.point.mode, p.point.size) for p in overhead}
    for mw in ("ros2", "fastdds-jazzy", "ros1", "tcp"):  # every point has its counterpart
        assert {(p.point.mode, p.point.size) for p in overhead if p.point.mw == mw} == pairs
    study = expand(load_plan(PLANS / "ros-wired-vs-wireless.yaml"), out=Path("r"), agent=None, agent_info=AGENT,
                   cpu_count=2)
    assert {p.opts.link.name for p in study} == {"gige", "wifi"}
    assert {p.point.size for p in study} == {4 << 10, 64 << 10, 256 << 10, 2 << 20, 8 << 20}
    assert ("ros1", "best-effort") not in {(p.point.mw, p.point.get("reliability")) for p in study}


def test_wired_vs_wireless_counts_samples():
    points = expand(load_plan(PLANS / "wired-vs-wireless.yaml"), out=Path("r"), agent=None, agent_info=AGENT,
                    cpu_count=2)
    assert len(points) == 2 * 5 * 2
    # 100 samples at 10 Hz: 10 s, plus the margin, as the maximum
    assert all(p.point.get("samples") == 100 and p.point.get("duration") == 13_000_000_000 for p in points)


def test_rate_applies_to_rate_points_only():
    points = points_of("mw: udp\nmode: [latency, rate]\nsize: [32, 64]\nrate: [10, 20]\n")
    assert [(p.point.mode, p.point.size, p.point.rate_hz) for p in points] == [
        ("latency", 32, None), ("latency", 64, None),
        ("rate", 32, 10.0), ("rate", 32, 20.0), ("rate", 64, 10.0), ("rate", 64, 20.0)]
    assert [p.point.index for p in points] == list(range(6))


def test_every_option_expands_and_comma_lists_work():
    points = points_of("mw: udp,tcp\nwait: [block, spin]\ncpu: ['0,0', '0,1']\nsize: 1k\nduration: [1s, 2s]\n")
    assert len(points) == 2 * 2 * 2 * 2
    assert {(str(p.opts.cpu), p.point.get("wait"), p.point.get("duration")) for p in points} == {
        (c, w, d) for c in ("0,0", "0,1") for w in ("block", "spin") for d in (1_000_000_000, 2_000_000_000)}


def test_the_same_configuration_written_twice_runs_once():
    points = points_of("mw: [udp, 'tcp,udp']\nmode: rate\nsize: [1k, 1024, '2k,1KiB']\nrate: [1k, 1000]\n"
                       "confidence: 0.9\n")
    assert [(p.point.mw, p.point.size, p.point.rate_hz) for p in points] == [
        ("udp", 1024, 1000.0), ("udp", 2048, 1000.0), ("tcp", 1024, 1000.0), ("tcp", 2048, 1000.0)]
    assert len({p.point_hash for p in points}) == 4 and points[0].point.get("confidence") == 0.9


def test_bounds_of_exclude_rules():
    text = "mw: udp\nmode: rate\nsize: [32, 1k, 8k]\nrate: [10, 100, 1000]\nexclude:\n"

    def got(rules):
        return {(p.point.size, p.point.rate_hz) for p in points_of(text + rules)}

    assert got("  - size_under: 1k\n") == {(s, r) for s in (1024, 8192) for r in (10.0, 100.0, 1000.0)}
    assert got("  - rate_over: 100\n") == {(s, r) for s in (32, 1024, 8192) for r in (10.0, 100.0)}
    assert got("  - {rate_under: 100, size_over: 32}\n") == (
        {(s, r) for s in (32, 1024, 8192) for r in (10.0, 100.0, 1000.0)} - {(1024, 10.0), (8192, 10.0)})


def test_repetitions_and_keys():
    points = points_of("mw: udp\nsize: [32, 64]\nrepetitions: 3\n")  # interleaved: a round of every point
    assert [(p.point.size, p.repetition) for p in points] == [(32, 0), (64, 0), (32, 1), (64, 1), (32, 2), (64, 2)]
    assert len({p.point_hash for p in points}) == 6
    # the key is a function of the configuration: the same plan gives the same keys
    assert [p.point_hash for p in points] == [p.point_hash for p in points_of("mw: udp\nsize: [32, 64]\nrepetitions: 3\n")]


def test_exclude_rules():
    text = ("mw: [udp, cyclonedds]\nmode: rate\nsize: [1k, 64k, 1MiB]\nrate: [10, 10000]\n"
            "exclude:\n  - {mw: udp, size_over: 65507}\n  - offered_gbps_over: 1\n  - {mw: cyclonedds, rate: 10, size: 1k}\n")
    got = {(p.point.mw, p.point.size, p.point.rate_hz) for p in points_of(text)}
    # udp above 65507 B, anything above 1 Gbit/s (64k at 10 kHz: 5.2) and one cyclonedds point go
    assert got == {("udp", 1024, 10.0), ("udp", 1024, 10000.0),
                   ("cyclonedds", 1024, 10000.0), ("cyclonedds", 65536, 10.0), ("cyclonedds", 1 << 20, 10.0)}


def test_a_rule_naming_default_excludes_the_points_at_their_default():
    """`receive: [default, waitset]` with `{mw: fastdds, receive: default}`: fastdds keeps only waitset
    (a point at its default carries no value, and the rule must still see it)."""
    text = ("mw: [cyclonedds, fastdds]\nmode: latency\nreceive: [default, waitset]\n"
            "exclude:\n  - {mw: fastdds, receive: default}\n  - {mw: cyclonedds, receive: waitset}\n")
    got = sorted((p.point.mw, p.point.get("receive")) for p in points_of(text))
    assert got == [("cyclonedds", None), ("fastdds", "waitset")]


def test_samples_precision_and_qos_reach_the_options():
    (p,) = points_of("mw: fastdds\nmode: latency\nsamples: 500\nprecision: 5%\nconfidence: 0.99\n"
                     "transport: shm\nkeyed: true\ninstances: 100\nasync: true\nreceive: listener\n")
    assert (p.point.get("samples"), p.point.get("precision"), p.point.get("confidence")) == (500, 0.05, 0.99)
    assert p.point.get("duration") == 60_000_000_000  # a sample count without a duration: 60 s at most
    assert (p.point.get("transport"), p.point.get("instances"), p.point.get("async"), p.point.get("receive")) == (
        "shm", 100, True, "listener")


def test_a_key_that_applies_to_no_point_is_refused():
    """Issue 21: latency_count with no throughput point was dropped in silence."""
    with pytest.raises(PlanError) as err:
        points_of("mw: udp\nmode: [latency, rate]\nrate: 100\nlatency_count: [10, 100]\n")
    assert str(err.value) == "p.yaml: latency_count: 10,100: only with --mode throughput"
    # with a throughput point it applies there, and multiplies nothing else
    points = points_of("mw: udp\nmode: [latency, throughput]\nlatency_count: [10, 100]\n")
    assert [(p.point.mode, p.point.get("latency-count")) for p in points] == [
        ("latency", None), ("throughput", 10), ("throughput", 100)]


def test_expansion_is_proportional_to_the_points(monkeypatch):
    """A long list of an option that applies to one mode multiplies that mode's points only:
    the other mode's are made (and checked) once each."""
    import mwperf.plan.sweep_plan as sweep_plan

    checked = []
    real = sweep_plan.check_point
    monkeypatch.setattr(sweep_plan, "check_point", lambda opts, point: checked.append(point) or real(opts, point))
    rates = ", ".join(str(r) for r in range(1, 301))
    points = points_of(f"mw: udp\nmode: [latency, rate]\nsize: [32, 64]\nduration: 2s\nrate: [{rates}]\n")
    assert len(points) == 2 + 2 * 300 and len(checked) == len(points)


def test_batch_identifies_a_point():
    points = points_of("mw: cyclonedds\nmode: throughput\nbatch: [false, true]\n")
    assert [p.point.get("batch") for p in points] == [False, True] and points[0].point_hash != points[1].point_hash


BAD = [
    ("mw: udp\nsize: 0\n", "p.yaml: size: 0: size must be positive"),
    ("mw: udp\nsize: 70000\n", "p.yaml: size: 70000: udp carries at most 65507 bytes per message: "
                               "the largest UDP payload over IPv4: 65535 - 8 (UDP header) - 20 (IPv4 header) "
                               "(exclude it: {mw: udp, size_over: 65507})"),
    ("mw: [udp, nosuch]\n", "p.yaml: mw: nosuch: unknown middleware"),
    ("mw: udp\nmode: rate\nrate: [10, -5]\n", "p.yaml: rate: -5:"),
    ("mw: udp\nmode: rate\n", "p.yaml: mode: rate: needs --rate (publish rate, on absolute deadlines)"),
    ("mw: udp\nmode: warp\n", "p.yaml: mode: warp: choose from latency, throughput, rate, burst"),
    ("mw: udp\nsizes: 1k\n", "p.yaml: sizes: unknown key"),
    ("size: 1k\n", "p.yaml: mw: missing"),
    ("mw: udp\nreliability: reliable\n", "p.yaml: reliability: reliable: not supported by udp"),
    ("mw: udp\nduration: 5 parsecs\n", "p.yaml: duration: 5 parsecs:"),
    ("mw: udp\nexclude:\n  - {colour: red}\n", "p.yaml: exclude[0].colour: unknown condition"),
    ("mw: udp\nexclude:\n  - offered_gbps_over: lots\n", "p.yaml: exclude[0].offered_gbps_over: lots: not a valid bound"),
    ("mw: udp\nexclude:\n  - {mw: udp}\n", "p.yaml: exclude: every point is excluded"),
    ("mw: udp\nexclude:\n  - {mw: udpp}\n", "p.yaml: exclude[0].mw: udpp: not among the plan's values (udp)"),
    ("mw: udp\nexclude:\n  - {wait: spin}\n", "p.yaml: exclude[0].wait: this key: not among the plan's values"),
    ("mw: udp\nrepetitions: 0\n", "p.yaml: repetitions: 0: must be a whole number from 1 to 1000"),
    ("mw: udp\nkeyed: maybe\n", "p.yaml: keyed: maybe: expected true or false"),
    ("mw: udp\nprecision: 150%\n", "p.yaml: precision: 150%: must be from 0.01% to 99.99%"),
    ("mw: udp\nsamples: -3\n", "p.yaml: samples: -3: must be a whole number"),
    ("mw: [udp\n", "p.yaml: not valid YAML (line 2)"),
    ("- mw: udp\n", "p.yaml: expected a mapping of mwperf run options"),
    ("mw:\n", "p.yaml: mw: no value"),
    # a plan's matrices after its main one (also:, plan/matrix.py)
    ("mw: udp\nalso: 3\n", "p.yaml: also: expected a list of matrices"),
    ("mw: udp\nalso: [3]\n", "p.yaml: also[0]: expected a mapping of options"),
    ("mw: udp\nalso:\n  - {security: encrypt}\n", "p.yaml: also[0].mw: missing"),
    ("mw: udp\nalso:\n  - {mw: udp, launches: 2}\n", "p.yaml: also[0].launches: a key of the whole plan"),
    ("mw: udp\nalso:\n  - {mw: udp, sizes: 1k}\n", "p.yaml: also[0].sizes: unknown key"),
    ("mw: udp\nalso:\n  - {mw: built, security: warp}\n",
     "p.yaml: also[0].security: warp: choose from none, auth, sign, encrypt"),
    ("mw: udp\nalso:\n  - {mw: udp, security: encrypt}\n",
     "p.yaml: also[0].security: encrypt: not supported by udp"),
    ("mw: udp\nalso:\n  - {mw: built, security: encrypt, congestion: drop}\n",
     "p.yaml: also[0].mw: built: no middleware built here honours every option of this matrix"),
    ("mw: udp\nalso:\n  - {mw: udp, exclude: [{size: 1k}]}\n",
     "p.yaml: also[0].exclude[0].size: this key: not among the plan's values"),
    ("mw: udp\nmode: rate\nsearch: {loss: 1%}\nalso:\n  - {mw: tcp}\n", "p.yaml: also: not in a max-rate plan"),
    # a discovery matrix in also (mode: discovery, plan/discovery_plan.py): a discovery plan's own checks
    ("mw: udp\nalso:\n  - {mode: [latency, discovery], mw: cyclonedds}\n",
     "p.yaml: also[0].mode: ['latency', 'discovery']: discovery goes in a matrix of its own"),
    ("mw: udp\nalso:\n  - {mode: discovery, mw: cyclonedds, participants: 2, size: 1k}\n",
     "p.yaml: also[0].size: not a key of a discovery matrix"),
    ("mw: udp\nalso:\n  - {mode: discovery, mw: cyclonedds}\n", "p.yaml: also[0].participants: required"),
    ("mw: udp\nalso:\n  - {mode: discovery, mw: cyclonedds, participants: 2, discovery: gossip}\n",
     "p.yaml: also[0].discovery: gossip: choose from"),
    ("mw: udp\nalso:\n  - {mode: discovery, mw: cyclonedds, participants: 2, discovery: default}\n",
     "p.yaml: also[0].discovery: default: multicasts: it runs only on a namespace pair's link"),
    ("mw: udp\nalso:\n  - {mode: discovery, mw: cyclonedds, participants: 2, timeout: soon}\n",
     "p.yaml: also[0].timeout: soon:"),
    ("mw: udp\nalso:\n  - {mode: discovery, mw: cyclonedds, participants: 2, link: wifi}\n",
     "p.yaml: also[0].link: wifi: unknown link kind"),
    ("mw: udp\nalso:\n  - {mode: discovery, mw: nosuch, participants: 2}\n", "p.yaml: also[0].mw: nosuch:"),
    ("mw: udp\nmode: rate\nsearch: {loss: 1%}\nalso:\n  - {mode: discovery, mw: cyclonedds, participants: 2}\n",
     "p.yaml: also: not in a max-rate plan"),
]


@pytest.mark.parametrize("text, expected", BAD)
def test_bad_plans_name_the_key(text, expected):
    with pytest.raises(PlanError) as err:
        points_of(text)
    message = str(err.value)
    assert message.startswith(expected), message
    assert "\n" not in message


def test_bad_plan_messages_golden():
    """Every bad plan's whole message, as a user sees it."""
    lines = []
    for text, _ in BAD:
        with pytest.raises(PlanError) as err:
            points_of(text)
        lines.append(f"{text.strip()!r}\n  -> {err.value}")
    check_golden("plans/bad-plans.txt", "\n".join(lines) + "\n")


def test_missing_plan_file(tmp_path):
    with pytest.raises(PlanError, match=r"nope.yaml: cannot read the plan"):
        load_plan(tmp_path / "nope.yaml")


def test_undecodable_plan_file(tmp_path):
    bad = tmp_path / "bin.yaml"
    bad.write_bytes(b"\xff\xfe\x00mw")
    with pytest.raises(PlanError, match=r"bin.yaml: not a text \(UTF-8\) file"):
        load_plan(bad)
