"""``mwperf lab prepare|restore --inventory lab.yml``: the hosts of an Ansible
inventory made ready for mwperf by the project's playbook (:mod:`mwperf.lab`):
each host's bundle installed in the cache ``--hosts`` uses, with ``--tune`` the
recommended sysctls applied (kept until ``mwperf lab restore``), each host's
time synchronisation checked; one line per host says what it is. ``mwperf
sweep --inventory`` does the same before measuring, and puts the sysctls back
at its end unless ``--keep-tuned``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mwperf.cli import hosts
from mwperf.errors import UsageError

__all__ = ["add_parser", "add_lab_options", "command"]


def add_lab_options(parser: argparse.ArgumentParser, *, required: bool) -> None:
    parser.add_argument("--inventory", metavar="FILE", required=required,
                        help="the lab's hosts: an Ansible inventory (its YAML format; ansible_host, ansible_user, "
                             "ansible_port, ansible_ssh_private_key_file, ansible_ssh_common_args; mwperf_data: a "
                             "host's data address when it is not ansible_host)")
    parser.add_argument("--tune", action="store_true",
                        help="with --inventory: apply the recommended socket-buffer and fragment sysctls on each host "
                             "(as root, or sudo without a password; refused with the reason otherwise); recorded")


def add_parser(sub: argparse._SubParsersAction) -> None:
    lab = sub.add_parser("lab", help="prepare the hosts of an Ansible inventory (bundle, sysctls, time sync)",
                         description="The hosts of an Ansible inventory made ready by mwperf's playbook.")
    verbs = lab.add_subparsers(dest="verb", metavar="prepare|restore")
    prepare = verbs.add_parser("prepare", help="install each host's bundle, check its clock, --tune its sysctls",
                               description="Run mwperf's playbook over the inventory: each host's bundle installed "
                                           "(the cache --hosts uses), its time synchronisation checked, with --tune "
                                           "the recommended sysctls applied (kept until mwperf lab restore); one "
                                           "line per host.",
                               epilog="example:\n  mwperf lab prepare --inventory lab.yml --tune",
                               formatter_class=argparse.RawDescriptionHelpFormatter)
    add_lab_options(prepare, required=True)
    hosts.add_far_options(prepare)
    prepare.set_defaults(func=command)
    restore = verbs.add_parser("restore", help="put back the sysctls --tune changed",
                               description="Put back, on each host of the inventory, the sysctls --tune changed.")
    restore.add_argument("--inventory", metavar="FILE", required=True, help="the lab's hosts: an Ansible inventory")
    restore.set_defaults(func=command)
    lab.set_defaults(func=lambda ns, argv: _no_verb())


def _no_verb() -> int:
    raise UsageError("lab", None, "a verb is required: prepare or restore")


def command(ns: argparse.Namespace, argv: list[str]) -> int:
    from mwperf.lab import inventory, prepare

    inv = inventory.read(ns.inventory)
    if ns.verb == "restore":
        done = prepare.restore(inv, sys.stderr)
        for name, lines in done.items():
            sys.stdout.write(f"{name}: {', '.join(lines) if lines else 'nothing to put back'}\n")
        return 0 if len(done) == len(inv.hosts) else 1
    ready = prepare.prepare(inv, Path(ns.bundles) if ns.bundles else None, ns.remote_dir, ns.tune)
    for host in ready.values():
        sys.stdout.write(host.describe() + "\n")
    if any(host.tuned for host in ready.values()):
        sys.stdout.write(f"the sysctls stay tuned: mwperf lab restore --inventory {ns.inventory} puts them back\n")
    return 0
