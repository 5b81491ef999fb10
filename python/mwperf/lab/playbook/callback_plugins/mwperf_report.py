"""mwperf's report of a playbook run (Ansible loads it beside prepare.yml): every task's result on every
host, as JSON, in the file ``$MWPERF_LAB_REPORT`` (``{host: {task: {status, rc, stdout, stderr, msg}}}``),
written at the end of the run; :mod:`mwperf.lab.prepare` reads it. Nothing of mwperf is imported here."""

from __future__ import annotations

import json
import os

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
    name: mwperf_report
    type: aggregate
    short_description: each task's result on each host, as JSON, for mwperf
    description: written to the file $MWPERF_LAB_REPORT at the end of the run
"""


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "mwperf_report"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.results: dict[str, dict[str, dict]] = {}

    def _keep(self, result, status: str) -> None:
        raw = result._result if hasattr(result, "_result") else result.result
        task = result._task if hasattr(result, "_task") else result.task
        host = result._host if hasattr(result, "_host") else result.host
        self.results.setdefault(host.get_name(), {})[task.get_name()] = {
            "status": status, "rc": raw.get("rc"), "stdout": str(raw.get("stdout") or ""),
            "stderr": str(raw.get("stderr") or ""), "msg": str(raw.get("msg") or "")}

    def v2_runner_on_ok(self, result) -> None:
        self._keep(result, "ok")

    def v2_runner_on_failed(self, result, ignore_errors: bool = False) -> None:
        self._keep(result, "failed")

    def v2_runner_on_unreachable(self, result) -> None:
        self._keep(result, "unreachable")

    def v2_playbook_on_stats(self, stats) -> None:
        path = os.environ.get("MWPERF_LAB_REPORT")
        if path:
            with open(path, "w", encoding="utf-8") as out:
                json.dump(self.results, out)
