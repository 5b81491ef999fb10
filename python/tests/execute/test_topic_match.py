"""Topic expressions against every run id at once (execute/topic_match.py),
checked against the standard library's fnmatch (another implementation of
the same patterns) over run ids drawn at random and at the edges: "all"
means every drawn name matches, "none" none, and "some" is shown by a name
that matches and one that does not."""

import fnmatch
import random

import pytest

from mwperf.execute.topic_match import TOPICS, DocumentError, Topic, verdict

DATA = TOPICS["data"]
EDGES = [0, 1, 9, 10, 42, 99, 100, 123456789, 999999999, 1000000000, 2 ** 31, 4294967295]


def names(topic: Topic, rng: random.Random, n: int = 400) -> list[str]:
    ids = EDGES + [rng.randrange(10 ** rng.randint(1, 10)) for _ in range(n)]
    return [f"{topic.prefix}{i}" for i in ids if i < 2 ** 32]


@pytest.mark.parametrize("expr,said", [
    ("*", "all"), ("rt/*", "all"), ("rt/mwperf_data_*", "all"), ("*_data_*", "all"), ("rt/mwperf_data_[0-9]*", "all"),
    ("rt/mwperf_data_*[0-9]", "all"), ("[!x]*", "all"), ("rt?mwperf_data_*", "all"),
    ("rt/mwperf_echo_*", "none"), ("mwperf_data_*", "none"), ("rt/mwperf_data_", "none"), ("rt/mwperf_data_*x", "none"),
    ("rt/mwperf_data_1*", "some"), ("rt/mwperf_data_?", "some"), ("rt/mwperf_data_[0-9]", "some"),
    ("rt/mwperf_data_*7", "some"), ("rt/mwperf_data_??????????", "some"),
])
def test_a_verdict_is_what_fnmatch_says_of_every_run_id(expr, said):
    assert verdict(expr, DATA) == said
    rng = random.Random(expr)
    matched = {fnmatch.fnmatchcase(name, expr) for name in names(DATA, rng, 4000)}
    assert matched == {"all": {True}, "none": {False}, "some": {True, False}}[said]


def test_random_patterns_agree_with_fnmatch():
    rng = random.Random(45)
    wild = ["*", "?", "[0-4]", "[!5]", "[1-9]", "[a-z]", "[!a-z]", "x", ""]
    told = {"all": 0, "none": 0, "some": 0}
    for _ in range(1500):  # a topic name with stretches made wild
        tail = rng.choice(["*", "[1-9]*", "?*", "*[0-9]", str(rng.randrange(1000)), f"{rng.randrange(10)}*"])
        expr = DATA.prefix + tail
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(expr))
            expr = expr[:at] + rng.choice(wild) + expr[at + rng.randint(0, 4):]
        expr += rng.choice(["", "", "*"])
        said = verdict(expr, DATA)
        told[said] += 1
        matched = {fnmatch.fnmatchcase(name, expr) for name in names(DATA, rng, 60)}
        if said == "all":
            assert matched == {True}, expr
        elif said == "none":
            assert matched == {False}, expr
    assert min(told.values()) > 50, told  # each verdict drawn often


def test_a_partition_is_one_name():
    empty = Topic("", run_id=False)
    assert verdict("*", empty) == "all" and verdict("", empty) == "all" and verdict("a*", empty) == "none"


def test_an_expression_the_middlewares_read_differently_is_refused():
    # Cyclone DDS reads the backslash as an escape, Fast DDS as a character
    with pytest.raises(DocumentError, match=r"read differently with backslash escapes"):
        verdict(r"rt\/mwperf_data_*", DATA)
    assert verdict(r"rt/mwperf_data_\*", DATA) == "none"  # a star, or a backslash and a star: both never match
    with pytest.raises(DocumentError, match=r"\[: class"):
        verdict("rt/mwperf_data_[[:digit:]]*", DATA)
