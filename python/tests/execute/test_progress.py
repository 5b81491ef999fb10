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
