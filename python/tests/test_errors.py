"""Errors carry what they are about as typed attributes; str() is the one line a user sees."""

from pathlib import Path

import pytest

from conftest import described
from mwperf.errors import PlanError, Unsupported, UsageError
from mwperf.plan.sweep_plan import expand, parse_plan


def test_usage_error_reads_like_the_command_line():
    error = UsageError("--size", "70000", "udp carries at most 65507 bytes per message")
    assert (error.option, error.value, error.reason) == ("--size", "70000", "udp carries at most 65507 bytes per message")
    assert str(error) == "--size 70000: udp carries at most 65507 bytes per message"
    assert str(UsageError("--async", None, "not supported by udp")) == "--async: not supported by udp"
    assert str(UsageError(None, None, "a command is required")) == "a command is required"
    assert Unsupported("--async", None, "not supported by udp", "udp").mw == "udp"


def test_plan_error_names_the_key_from_the_typed_option():
    with pytest.raises(PlanError) as err:
        expand(parse_plan("mw: udp\nmode: rate\nrate: 1e30\n", "p.yaml"), out=Path("r"), agent=None,
               agent_info=described())
    assert (err.value.source, err.value.key, err.value.value) == ("p.yaml", "rate", "1e30")
    assert str(err.value).startswith("p.yaml: rate: 1e30: must be from")
