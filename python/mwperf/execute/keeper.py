"""The run's services kept across its points (RouDi, a rosmaster: see
:mod:`mwperf.execute.services`), so that each point does not pay their start."""

from __future__ import annotations

import contextlib
from typing import Iterator

from mwperf.description import AdapterInfo
from mwperf.execute.placement import Local, Placement
from mwperf.execute.services import Service, running, started
from mwperf.plan.options import TestPoint

__all__ = ["ServiceKeeper"]


class ServiceKeeper:
    """The run's services, kept across its points: RouDi or a rosmaster starts
    for the first point that needs it and serves the next ones on this host
    (a namespace pair or other hosts still get one per point). A failed
    point's instance is replaced for the next (:meth:`failed`); the runner
    stops the last in its ``finally`` (:meth:`stop`). A record says which
    instance served it and how many points it served before (:meth:`describe`)."""

    def __init__(self) -> None:
        self.current: Service | None = None
        self.started = 0  # instances started in this run
        self.served = 0   # points the current instance has served
        self._spoiled = False

    @contextlib.contextmanager
    def running(self, info: AdapterInfo | None, placement: Placement, point: TestPoint) -> Iterator[Service]:
        """The point's service: the kept one when it fits, else a new one (kept on one host)."""
        wanted = info.service if info is not None else None
        if info is None or wanted is None or not isinstance(placement, Local):
            with running(info, placement, point) as service:
                yield service
            return
        if self.current is not None and (self.current.name != wanted or self._spoiled):
            self.stop()
        if self.current is None:
            self.current, self.served, self._spoiled = started(info, placement, point), 0, False
            self.started += 1
        try:
            yield self.current
        except BaseException:
            self._spoiled = True
            raise
        self.served += 1

    def failed(self) -> None:
        self._spoiled = True

    def describe(self) -> dict | None:
        return None if self.current is None else \
            {"name": self.current.name, "instance": self.started, "served_before": self.served}

    def stop(self) -> None:
        service, self.current = self.current, None
        if service is not None:
            service.stop()
