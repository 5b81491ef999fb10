import pytest

from mwperf.units import (
    MAX_DURATION_NS, MAX_RATE_HZ, MAX_SIZE,
    UnitError, format_duration_ns, format_rate_hz, format_size, parse_duration_ns, parse_list,
    parse_rate_hz, parse_size,
)


@pytest.mark.parametrize("text, expected", [
    ("32", 32), ("63000", 63000), ("32B", 32), ("32b", 32),
    ("1k", 1024), ("1K", 1024), ("1kb", 1024), ("1KB", 1024), ("1KiB", 1024), ("4KiB", 4096), ("4kib", 4096),
    ("1M", 1048576), ("1m", 1048576), ("1MB", 1048576), ("1MiB", 1048576), ("16MiB", 16 * 1048576),
    ("1G", 1 << 30), ("1GiB", 1 << 30), ("1.5k", 1536), (" 64 ", 64), ("2 KiB", 2048),
])
def test_parse_size_good(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text, message", [
    ("0", "positive"), ("-1", "positive"), ("-1k", "positive"), ("", "not a number"), ("k", "not a number"),
    ("abc", "not a number"), ("5parsecs", "unknown size unit 'parsecs'"), ("1.3", "whole number"),
    ("1TB", "unknown size unit"), ("1e400", "finite"), ("nan", "not a number"),
])
def test_parse_size_bad(text, message):
    with pytest.raises(UnitError, match=message):
        parse_size(text)


@pytest.mark.parametrize("text, expected", [
    ("5", 5_000_000_000), ("5s", 5_000_000_000), ("2.5s", 2_500_000_000), ("500ms", 500_000_000),
    ("100us", 100_000), ("100µs", 100_000), ("250ns", 250), ("1m", 60_000_000_000), ("2min", 120_000_000_000),
    ("1h", 3_600_000_000_000), ("0.2", 200_000_000), ("1S", 1_000_000_000), ("10MS", 10_000_000),
])
def test_parse_duration_good(text, expected):
    assert parse_duration_ns(text) == expected


def test_parse_duration_zero():
    with pytest.raises(UnitError, match="positive"):
        parse_duration_ns("0")
    assert parse_duration_ns("0", allow_zero=True) == 0
    assert parse_duration_ns("0s", allow_zero=True) == 0
    with pytest.raises(UnitError, match="negative"):
        parse_duration_ns("-1s", allow_zero=True)


@pytest.mark.parametrize("text, message", [
    ("5parsecs", "unknown duration unit 'parsecs'"), ("-5s", "positive"), ("fast", "not a number"),
    ("0.1ns", "below one nanosecond"), ("1d", "unknown duration unit"),
])
def test_parse_duration_bad(text, message):
    with pytest.raises(UnitError, match=message):
        parse_duration_ns(text)


@pytest.mark.parametrize("text, expected", [
    ("100", 100.0), ("1k", 1000.0), ("1K", 1000.0), ("2.5k", 2500.0), ("10000Hz", 10000.0),
    ("1kHz", 1000.0), ("1M", 1e6), ("0.5", 0.5),
])
def test_parse_rate_good(text, expected):
    assert parse_rate_hz(text) == expected


@pytest.mark.parametrize("text, message", [
    ("0", "positive"), ("-10", "positive"), ("fast", "not a number"), ("10parsecs", "unknown rate unit"),
    ("", "not a number"),
])
def test_parse_rate_bad(text, message):
    with pytest.raises(UnitError, match=message):
        parse_rate_hz(text)


def test_parse_list():
    assert parse_list("udp,tcp") == ["udp", "tcp"]
    assert parse_list(" udp , tcp ") == ["udp", "tcp"]
    with pytest.raises(UnitError, match="empty"):
        parse_list("udp,,tcp")
    with pytest.raises(UnitError, match="empty"):
        parse_list("")


def test_formatters():
    assert format_size(1024) == "1KiB"
    assert format_size(63000) == "63000"
    assert format_size(1 << 20) == "1MiB"
    assert format_duration_ns(1_500_000_000) == "1.5s"
    assert format_duration_ns(200_000_000) == "200ms"
    assert format_duration_ns(60_000_000_000) == "1m"
    assert format_duration_ns(5) == "5ns"
    assert format_rate_hz(1000.0) == "1000"
    assert format_rate_hz(2.5) == "2.5"
    assert format_rate_hz(None) == "-"


@pytest.mark.parametrize("parse, text, message", [
    (parse_size, "1e308k", "size above 1TiB"), (parse_size, "1e308GiB", "size above 1TiB"),
    (parse_size, "1025GiB", "size above 1TiB"), (parse_size, "-1e308k", "positive"),
    (parse_duration_ns, "1e300h", "duration above"), (parse_duration_ns, "1e300", "duration above"),
    (parse_duration_ns, "-1e308h", "positive"), (parse_rate_hz, "1e308k", "rate above 1 THz"),
    (parse_rate_hz, "1e308", "rate above 1 THz"),
])
def test_huge_values_are_refused_not_overflowed(parse, text, message):
    """The issue's probe: 1e308k and 1e300h overflowed into OverflowError
    (float infinity to integer); the parsers' bounds refuse them first."""
    with pytest.raises(UnitError, match=message):
        parse(text)


def test_the_bounds_themselves_parse():
    assert parse_size("1024GiB") == MAX_SIZE
    assert parse_duration_ns(f"{MAX_DURATION_NS}ns") == MAX_DURATION_NS
    assert parse_rate_hz("1000G") == MAX_RATE_HZ
