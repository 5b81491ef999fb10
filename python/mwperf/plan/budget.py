"""What a plan may ask for before it starts: a point limit and an estimated
duration, checked for every kind of plan (a sweep, a run's command-line
lists, a discovery plan, a max-rate search, a lab's plan on each of its host
pairs) before anything is measured (a dry run included).

Over either limit the plan is refused, one line with its count and its
estimate, unless the user raised the limit: ``--max-points N`` (or
``$MWPERF_MAX_POINTS``) and ``--max-duration D`` (or
``$MWPERF_MAX_DURATION``, a duration: ``36h``). The estimate is each point's
warm-up and duration (a discovery point's or a search probe's: its most)
plus a start-up, the least it can take; a plan of 999,000 points is refused
at once, before a single one is made (the count is arithmetic).
"""

from __future__ import annotations

import os

from mwperf.display import shown
from mwperf.errors import PlanError, UnitError, UsageError
from mwperf.units import parse_duration_ns

__all__ = ["MAX_POINTS", "ENV_MAX_POINTS", "MAX_DURATION_NS", "ENV_MAX_DURATION", "START_UP_S", "max_points_default",
           "max_duration_default", "check_budget", "parse_max_duration", "format_hours"]

#: A plan of more points is refused unless the limit is raised: at a second a point it runs for hours,
#: at 30 s (rate-matrix.yaml) for days.
MAX_POINTS = 10_000
ENV_MAX_POINTS = "MWPERF_MAX_POINTS"
#: A plan estimated to take longer is refused unless the limit is raised.
MAX_DURATION_NS = 24 * 3600 * 10**9
ENV_MAX_DURATION = "MWPERF_MAX_DURATION"
#: What the estimate counts for starting a launch's agents (the least: Fast DDS, Connext and ROS take more).
START_UP_S = 0.2


def max_points_default() -> int:
    """The point limit: $MWPERF_MAX_POINTS when set (UsageError when it is no whole number), else MAX_POINTS."""
    text = os.environ.get(ENV_MAX_POINTS, "").strip()
    if not text:
        return MAX_POINTS
    if not (text.isascii() and text.isdigit() and int(text) > 0):
        raise UsageError(f"{ENV_MAX_POINTS}={shown(text, 40)}", None, "must be a whole number of points, 1 or more")
    return int(text)


def parse_max_duration(text: str, option: str = "--max-duration") -> int:
    """A duration limit in ns (``36h``, ``90m``); UsageError naming ``option``."""
    try:
        return parse_duration_ns(text)
    except UnitError as exc:
        raise UsageError(option, shown(text, 40), str(exc)) from None


def max_duration_default() -> int:
    """The duration limit: $MWPERF_MAX_DURATION when set, else MAX_DURATION_NS."""
    text = os.environ.get(ENV_MAX_DURATION, "").strip()
    return parse_max_duration(text, ENV_MAX_DURATION) if text else MAX_DURATION_NS


def format_hours(seconds: float) -> str:
    """``3d04h``, ``5h07m``, ``12m30s``, ``40s``."""
    s = max(0, int(round(seconds)))
    days, rest = divmod(s, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d{hours:02d}h"
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def check_budget(source: str, count: int, estimate_s: float, *, max_points: int | None = None,
                 max_duration_ns: int | None = None, plan: bool = True, what: str = "points",
                 bound: str = "at the least") -> None:
    """Refuse a plan (``source``: its file, or the command) of more than the point limit or estimated to take
    longer than the duration limit: PlanError (a plan file) or UsageError (``plan=False``), naming the count
    and the estimate (``bound``: what it is, the least the points take or their most) and the options that
    allow it."""
    points = max_points if max_points is not None else max_points_default()
    longest = max_duration_ns if max_duration_ns is not None else max_duration_default()
    over = []
    if count > points:
        over.append(f"more than {points} {what}")
    if estimate_s * 1e9 > longest:
        over.append(f"longer than {format_hours(longest / 1e9)}")
    if not over:
        return
    reason = (f"{count} {what}, about {format_hours(estimate_s)} {bound}: {' and '.join(over)}, refused before "
              f"it starts (--max-points N and --max-duration D, or ${ENV_MAX_POINTS} and ${ENV_MAX_DURATION}, "
              f"allow more)")
    if plan:
        raise PlanError(source, None, None, reason)
    raise UsageError(source, None, reason)
