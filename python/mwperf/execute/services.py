"""Helper processes a middleware needs beside its two agents, one per point.

Some middlewares only talk through a daemon: iceoryx through RouDi, ROS 1
through a rosmaster. The agent names it in its description of the adapter
(``AdapterInfo.service``, e.g. ``"roudi"``); the controller runs it for each
point of that adapter: started where the agents will run before they start,
giving them extra arguments or environment, and stopped after the point,
whether the point succeeded, failed, or was interrupted. What a killed
controller leaves behind is removed by :meth:`Service.clean_stale` at the
start of the next run and by ``mwperf doctor --cleanup``.

A service is one subclass of :class:`Service` here, registered under the
name the agent uses with :func:`register`. None is registered yet: a point
whose adapter names an unknown service fails with that reason, and the run
goes on.
"""

from __future__ import annotations

import contextlib
from typing import ClassVar, Iterator

from mwperf.description import AdapterInfo
from mwperf.errors import ServiceError
from mwperf.execute.placement import Placement
from mwperf.plan.options import TestPoint

__all__ = ["Service", "SERVICES", "register", "running", "clean_stale"]


class Service:
    """A helper process of one point. The base class is the absence of one:
    it starts nothing and adds nothing."""

    #: The name the agent's adapter description uses (``service``).
    name: ClassVar[str] = ""

    def __init__(self, placement: Placement, point: TestPoint):
        self.placement = placement  # runs the service where a role runs (placement.command)
        self.point = point

    def start(self) -> None:
        """Start the helper where the point's agents will run; ServiceError when it cannot."""

    def agent_args(self, role: str) -> list[str]:
        """Extra arguments for the agent of ``role``."""
        return []

    def agent_env(self, role: str) -> dict[str, str]:
        """Extra environment for the agent of ``role``."""
        return {}

    def stop(self) -> None:
        """Stop the helper and remove what it made; also called when start() failed half-way."""

    @classmethod
    def clean_stale(cls) -> list[str]:
        """Remove what instances of a killed controller left; the names of what was removed."""
        return []


#: name (``AdapterInfo.service``) -> the class that runs it.
SERVICES: dict[str, type[Service]] = {}


def register(cls: type[Service]) -> type[Service]:
    """Class decorator: make ``cls`` the service of its ``name``."""
    SERVICES[cls.name] = cls
    return cls


@contextlib.contextmanager
def running(info: AdapterInfo | None, placement: Placement, point: TestPoint) -> Iterator[Service]:
    """The point's service, started, and always stopped at the end of the block."""
    wanted = info.service if info is not None else None
    if wanted is None:
        yield Service(placement, point)
        return
    cls = SERVICES.get(wanted)
    if cls is None:
        raise ServiceError(f"{point.mw}: needs the '{wanted}' service, which this controller cannot run "
                           f"(none is registered under that name in mwperf/execute/services.py)")
    service = cls(placement, point)
    try:
        service.start()
        yield service
    finally:
        service.stop()


def clean_stale() -> list[str]:
    """What every registered service's killed instances left, removed."""
    return [name for cls in SERVICES.values() for name in cls.clean_stale()]
