"""``mwperf sweep PLAN --inventory lab.yml --pairs a:b,b:c|all``: a plan over
the pairs of hosts of a lab, one pair at a time (a shared link carries one
pair's traffic), into one run directory; ``mwperf sweep PLAN --hosts
pub=..,sub=..``: over one pair, as ``mwperf run --hosts`` (no playbook).

Before anything is measured: the inventory and the pairs are checked (one
line, exit 2), the plan is validated as a two-host one, the playbook
prepares every host (:mod:`mwperf.lab.prepare`: bundles, ``--tune``, time
sync), and each pair is put in place as ``--hosts`` does (its hosts asked,
the plan's points checked against the agent of each host's bundle). Every
record carries its ``host_pair`` (``pub:sub``, the inventory's names) and a
point key of its own per pair; run.json the lab (``lab``: each host, what
tune changed and what was put back) and each pair's hosts (``host_pairs``).
What ``--tune`` changed is put back at the end unless ``--keep-tuned``.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Callable

from mwperf.description import AgentInfo
from mwperf.errors import BadInput, UsageError
from mwperf.plan.budget import check_budget
from mwperf.plan.sweep_plan import Plan, launches_s

__all__ = ["add_options", "check", "sweep"]


def add_options(parser: argparse.ArgumentParser) -> None:
    from mwperf.cli import hosts, lab

    lab.add_lab_options(parser, required=False)
    parser.add_argument("--pairs", metavar="PUB:SUB[,...]|all",
                        help="with --inventory: the pairs of hosts to run the plan on, one pair at a time, the "
                             "first host publishing; all: every two hosts of the inventory (default: all)")
    parser.add_argument("--keep-tuned", action="store_true",
                        help="with --tune: leave the sysctls tuned at the end (mwperf lab restore puts them back)")
    parser.add_argument("--hosts", metavar="pub=USER@HOST,sub=USER@HOST",
                        help="run every point on two hosts over ssh, as mwperf run --hosts (each given its bundle)")
    parser.add_argument("--data", metavar="pub=IP,sub=IP", help="with --hosts: the data addresses")
    hosts.add_far_options(parser)


def check(ns: argparse.Namespace):
    """The options of a sweep between hosts that go together, then the inventory and its pairs, named before
    anything else is looked at: (the inventory or None, the pairs of hosts), None on this host."""
    if ns.inventory is None:
        lab_only = (("--pairs", ns.pairs), ("--tune", ns.tune), ("--keep-tuned", ns.keep_tuned))
        far = (("--remote-dir", ns.remote_dir), ("--bundles", ns.bundles), ("--data", ns.data))
        for flag, given in lab_only + (far if ns.hosts is None else ()):
            if given:
                raise UsageError(flag, None if given is True else given, "only with --inventory"
                                 if (flag, given) in lab_only else "only with --hosts or --inventory")
        if ns.hosts is None:
            return None
    elif ns.hosts is not None:
        raise UsageError("--hosts", ns.hosts, "not with --inventory (its pairs say where: --pairs)")
    if ns.resume is not None:
        raise UsageError("--inventory" if ns.hosts is None else "--hosts", ns.inventory or ns.hosts,
                         "not with --resume (a sweep between hosts runs into a new directory)")
    if ns.keep_tuned and not ns.tune:
        raise UsageError("--keep-tuned", None, "only with --tune")
    if ns.hosts is not None:
        from mwperf.plan.where import parse_hosts

        return None, [parse_hosts(ns.hosts, ns.data)]
    from mwperf.lab import inventory

    inv = inventory.read(ns.inventory)
    return inv, [inv.host_pair(a, b) for a, b in inv.pairs(ns.pairs or "all")]


def sweep(ns: argparse.Namespace, argv: list[str], agent: str, agent_info: AgentInfo, out: Path, lab,
          plan_file: str, plan_doc: Callable[[Plan, int], dict], stored: bool = False) -> int:
    """Run the plan over the lab's pairs (``lab``: :func:`check`'s), saved in ``plan_file``, run.json's options
    ``plan_doc``'s; the exit code (``stored``: the run goes into a store, which says where the report is)."""
    from mwperf.cli.common import run_outputs
    from mwperf.cli.hosts import far_side
    from mwperf.execute import lock, provenance
    from mwperf.execute.runner import clean_far, execute
    from mwperf.execute.ssh import close_shared_connections
    from mwperf.hosts.prepare import buffer_warnings
    from mwperf.lab import prepare
    from mwperf.model.merge import utc_now_iso
    from mwperf.plan.sweep_plan import expand, load_plan, point_hash
    from mwperf.results.rundir import RESULTS_JSONL, RunDir, check_new_dir, write_atomic

    inv, pairs = lab
    plan = load_plan(ns.plan)
    check_new_dir(out, fresh=False)
    if (out / RESULTS_JSONL).exists():
        raise UsageError("--out", str(out), f"already holds {RESULTS_JSONL}")
    spec = f"pub={pairs[0].pub},sub={pairs[0].sub}"
    one = expand(plan, out=out, agent=agent, agent_info=agent_info, max_points=ns.max_points, hosts=spec,
                 max_duration_ns=ns.max_duration)  # as two-host
    check_budget(ns.plan, len(one) * len(pairs), launches_s(one) * len(pairs), max_points=ns.max_points,
                 max_duration_ns=ns.max_duration, what=f"points on {len(pairs)} host pair(s)")
    lab_doc = None
    if inv is not None:
        ready = prepare.prepare(inv, Path(ns.bundles) if ns.bundles else None, ns.remote_dir, ns.tune,
                                out=sys.stderr)
        lab_doc = {"inventory": str(inv.path), "pairs": [p.name for p in pairs], "tune": ns.tune,
                   "hosts": {name: host.record() for name, host in ready.items()}}
    sides: list = []
    jobs: list = []
    try:
        for pair in pairs:
            spec = f"pub={pair.pub},sub={pair.sub}"
            planned: dict = {}

            def checked(target: str, bundle, info, spec=spec, planned=planned, name=pair.name) -> None:
                try:
                    planned[target] = expand(plan, out=out, agent=agent, agent_info=info, max_points=ns.max_points,
                                             hosts=spec, note=None, max_duration_ns=ns.max_duration)
                except BadInput as exc:
                    if name is None:  # --hosts
                        raise UsageError("--hosts", target, f"its {bundle.arch} bundle's agent: {exc}") from None
                    raise UsageError("--inventory", ns.inventory, f"pair {name}: {target}'s {bundle.arch} "
                                                                  f"bundle's agent: {exc}") from None

            side = far_side(pair, ns, check=checked)
            sides.append(side)
            points = planned.get(side.pair.pub) or expand(plan, out=out, agent=agent, agent_info=agent_info,
                                                           max_points=ns.max_points, hosts=spec, note=None,
                                                           max_duration_ns=ns.max_duration)
            with_hosts = {id(p.opts): dataclasses.replace(p.opts, hosts=side.pair) for p in points}
            for p in points:
                opts = with_hosts[id(p.opts)]
                point = dataclasses.replace(p.point, index=len(jobs))
                jobs.append(dataclasses.replace(p, opts=opts, point=point,
                                                point_hash=point_hash(opts, point, p.repetition or 0)))
            buffer_warnings(side.pair, [p.point.get("size") for p in points
                                        if isinstance(p.point.get("size"), int)], sys.stderr)
        with lock.hold(out, measure=False, force=ns.force, argv=argv) as held:
            write_atomic(out / plan_file, plan.text)
            doc = provenance.collect(run_id=out.name, argv=argv, options=plan_doc(plan, len(jobs)), agent=agent,
                                     started=utc_now_iso())
            doc["machine_lock"] = held.machine
            if lab_doc is not None:
                doc["lab"] = lab_doc
                doc["host_pairs"] = {s.pair.name: {"pub": s.pair.facts[0], "sub": s.pair.facts[1]} for s in sides}
            else:
                doc["hosts"] = {"pub": sides[0].pair.facts[0], "sub": sides[0].pair.facts[1]}
            for side in sides:
                clean_far(side, jobs[0].opts, sys.stderr)
            outputs = run_outputs(ns.format, verbose=ns.verbose, stored=stored)
            try:
                return execute(jobs, RunDir(out), agent, doc, outputs=outputs,
                               leftovers=agent_info.leftovers, floor=not ns.no_floor)
            finally:
                for side in sides:
                    clean_far(side, jobs[0].opts, sys.stderr)
    finally:
        close_shared_connections()
        if lab_doc is not None and inv is not None and ns.tune and not ns.keep_tuned:  # put back, also on refusal
            lab_doc["restored"] = prepare.restore(inv, sys.stderr)
            written = RunDir(out).read_run_json() if (out / "run.json").exists() else None
            if written is not None:
                RunDir(out).write_run_json({**written, "lab": lab_doc})
