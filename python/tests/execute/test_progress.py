"""Progress line and ETA."""

import io

from mwperf.execute.progress import POINT_OVERHEAD_S, Progress, format_eta


def test_format_eta():
    assert [format_eta(s) for s in (0, 59.4, 61, 3599, 3600, 5 * 3600 + 62)] == [
        "0s", "59s", "1m01s", "59m59s", "1h00m", "5h01m"]


def test_eta_scales_the_plan_by_what_points_really_took():
    now = [0.0]
    out = io.StringIO()
    bar = Progress(out, [9.0, 9.0, 9.0, 9.0], clock=lambda: now[0])
    assert bar.eta_s() == 4 * (9.0 + POINT_OVERHEAD_S)  # nothing measured yet: the plan
    bar.start("udp latency 32 B")
    now[0] += 5.0  # half the plan (adaptive stop)
    bar.finish("ok")
    assert bar.eta_s() == 3 * 10.0 * 0.5
    bar.start("udp latency 64 B")
    line = out.getvalue().splitlines()[-1]
    assert line == "#####--------------- ETA    15s [2/4] udp latency 64 B ... "
    assert out.getvalue().splitlines()[0].endswith("[1/4] udp latency 32 B ... ok")


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def test_on_a_terminal_a_live_bar_and_a_line_per_finished_point():
    now = [0.0]
    out = FakeTerminal()
    bar = Progress(out, [1.0, 1.0], clock=lambda: now[0])
    bar.start("udp latency 32 B")
    assert "[1/2] ETA 4s udp latency 32 B" in out.getvalue()  # the point in flight, on the live bar
    now[0] += 1.0
    bar.finish("ok p50 3.0 us")
    bar.start("udp latency 64 B")
    assert "[2/2] ETA 1s udp latency 64 B" in out.getvalue()  # ETA scaled by what the first point took: 2 s * 0.5
    now[0] += 1.0
    bar.finish("ok p50 3.1 us")
    text = out.getvalue()
    assert "[1/2] udp latency 32 B ... ok p50 3.0 us" in text and "[2/2] udp latency 64 B ... ok p50 3.1 us" in text
    assert "\x1b[?25h" in text  # the bar is gone and the cursor is back once the last point is done
    assert bar._bar is None


def test_in_a_pipe_no_cursor_movement_nor_colour():
    out = io.StringIO()
    bar = Progress(out, [1.0])
    bar.start("udp latency 32 B")
    bar.finish("ok")
    assert "\x1b" not in out.getvalue() and out.getvalue().count("\n") == 1


def test_a_plans_text_on_the_live_bar_is_text_not_markup_nor_terminal_control():
    """Issue 37: a scenario's name reached the live bar raw: its escape sequences retitled the window,
    ``[link=...]`` made a clickable OSC 8 link, ``[/oops]`` raised rich's MarkupError and ended the run."""
    out = FakeTerminal()
    bar = Progress(out, [1.0, 1.0], clock=lambda: 0.0)
    bar.start("s [link=https://example.invalid]click[/link] \x1b]0;owned\x07\x1b[31m \u202eevil")
    bar.finish("ok \x1b[2J")
    bar.start("t [/oops] [bold]x")
    bar.finish("ok")
    text = out.getvalue()
    assert "\x1b]0;" not in text and "\x1b]8;" not in text and "\x1b[31m" not in text and "\x1b[2J" not in text
    assert "\u202e" not in text and "\x07" not in text
    # as text (the console wraps at 80 columns)
    assert "[1/2] s [link=https://example.invalid]click[/link] \\x1b]0;owned\\x07\\x1b[31m" in text
    assert "\\u202eevil ... ok \\x1b[2J" in text
    assert "[2/2] t [/oops] [bold]x ... ok" in text
