"""Which points share an agent pair (execute/pair.py), and what a `next`
line carries: on planned points, no agent run."""

from __future__ import annotations

import dataclasses

from conftest import described, run_request
from mwperf.execute.pair import MAX_PAIR_POINTS, next_args, opened_for, signature
from mwperf.execute.point import agent_argv
from mwperf.plan.options import PlannedPoint
from mwperf.plan.validate import build_run_options


def jobs(tmp_path, **options):
    opts = build_run_options(run_request(out=str(tmp_path / "run"), cpu="0,1", reuse_agents=True, **options),
                             described(), cpu_count=2)
    return [PlannedPoint(opts, p) for p in opts.points()]


def test_points_alike_but_for_pair_rows_share_a_pair_opened_for_their_largest_size(tmp_path):
    run = jobs(tmp_path, mw="udp,tcp", mode="rate", rate="100,200", size="64,4k,1k", duration="1s")
    keys = [signature(j) for j in run]
    # per middleware: sizes and rates vary inside one pair; the middleware starts another
    assert len(set(keys)) == 2
    assert opened_for(run) == [4096] * len(run)
    assert [j.point.mw for j in run] == ["udp"] * 6 + ["tcp"] * 6


def test_a_qos_or_a_repetition_starts_another_pair(tmp_path):
    run = jobs(tmp_path, mw="cyclonedds", size="64,2k", reliability="reliable,best-effort")
    assert len({signature(j) for j in run}) == 2
    # the table's order makes the QoS vary fastest: consecutive points alternate, no two alike
    assert [(j.point.get("size"), j.point.get("reliability")) for j in run] == \
        [(64, "reliable"), (64, "best-effort"), (2048, "reliable"), (2048, "best-effort")]
    assert opened_for(run) == [64, 64, 2048, 2048]
    again = [dataclasses.replace(j, repetition=1) for j in run[:1]]
    assert signature(again[0]) != signature(run[0])


def test_a_pair_serves_at_most_the_agents_limit(tmp_path):
    base = jobs(tmp_path, mw="udp", size="64")[0]
    many = [base] * MAX_PAIR_POINTS + [dataclasses.replace(base, point=dataclasses.replace(base.point, values=tuple(
        (k, 2048 if k == "size" else v) for k, v in base.point.values)))]
    assert opened_for(many) == [64] * MAX_PAIR_POINTS + [2048]


def test_next_carries_every_pair_row_of_the_side_and_the_defaults_it_leaves_out(tmp_path):
    job = jobs(tmp_path, mw="udp", mode="rate", rate="250", size="2k", duration="1s")[0]
    argv = agent_argv("agent", "pub", job.point, job.opts, "5000")
    words = next_args(argv, job.opts, "pub", job.point).split(" ")
    given = dict(zip(words[::2], words[1::2]))
    assert given["--size"] == "2048" and float(given["--rate"]) == 250 and given["--duration"] == "1000000000"
    assert given["--warmup"] == "1000000000"  # the default, said: `next` keeps what it leaves out
    assert "--port" not in given and "--key" not in given and "--cpu" not in given  # not pair rows
    assert given["--samples-out"] == argv[argv.index("--samples-out") + 1]  # this point's own file
    sub = dict(zip(*[iter(next_args(agent_argv("agent", "sub", job.point, job.opts, "0"), job.opts, "sub",
                                    job.point).split(" "))] * 2))
    assert "--rate" not in sub and "--duration" not in sub  # the publisher's


def test_next_escapes_a_path_with_a_space(tmp_path):
    spaced = tmp_path / "a b"
    job = jobs(spaced, mw="udp", size="64")[0]
    argv = agent_argv("agent", "sub", job.point, job.opts, "0")
    line = next_args(argv, job.opts, "sub", job.point)
    samples = dict(zip(*[iter(line.split(" "))] * 2))["--samples-out"]
    assert " " not in samples and "a%20b" in samples
