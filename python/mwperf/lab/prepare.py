"""Ansible prepares the hosts of a lab: the playbook ``playbook/prepare.yml``
run over the inventory in steps, mwperf deciding between them.

1. ``probe``: each host says what it is (:data:`mwperf.hosts.probe.SCRIPT`);
   mwperf refuses a host no bundle can run on (:func:`mwperf.hosts.place.choose`:
   one line naming the host and the reason, exit 2) before anything is copied.
2. ``install``: each host lacking its bundle is given a self-unpacking
   installer (:func:`installer`: :data:`mwperf.hosts.place.INSTALL` and the
   archive after it), which unpacks into the same cache ``--hosts`` uses
   (``DIR/<hash>``, atomic: unpacked and checked beside it, then renamed);
   with ``tune`` the recommended sysctls (:data:`TUNED`) are applied as root or
   through ``sudo -n`` (refused with the reason where neither may: then what
   other hosts had changed is put back and the run refused). What tune
   changed is kept on the host (``~/.cache/mwperf/tuned.sysctl``) and in the
   report; ``restore`` (:func:`restore`) puts it back.

Each host's time synchronisation is read in the probe: the daemons that run
and chrony's offset where it answers.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from mwperf.errors import UsageError
from mwperf.hosts.bundles import Bundle
from mwperf.hosts.place import choose, install_command
from mwperf.hosts.probe import SCRIPT, HostFacts, parse
from mwperf.lab.ansible import Workspace, tool
from mwperf.lab.inventory import Inventory
from mwperf.plan.where import check_host_text

__all__ = ["PLAYBOOK", "TUNED", "ReadyHost", "prepare", "restore", "installer"]

PLAYBOOK = Path(__file__).resolve().parent / "playbook" / "prepare.yml"
#: The sysctls --tune sets, each at least (min) or at most (max) this: the socket buffers and IP reassembly
#: memory large samples need (ROS 2's DDS tuning guide, the DDS vendors'), incomplete fragments dropped sooner.
TUNED = (("net.core.rmem_max", 2147483647, "min"), ("net.core.wmem_max", 2147483647, "min"),
         ("net.ipv4.ipfrag_high_thresh", 134217728, "min"), ("net.ipv4.ipfrag_time", 3, "max"))
STEP_TIMEOUT_S = 1800.0


@dataclass
class ReadyHost:
    """One host of the lab, ready: what it is, its bundle and how it got there, what tune changed."""

    name: str
    facts: HostFacts
    bundle: Bundle
    state: str  # cached | copied | raced
    tuned: dict[str, list] = field(default_factory=dict)  # sysctl -> [before, after]
    kept: dict[str, int | str] = field(default_factory=dict)  # already at least (at most) the recommended value
    untuned: list[str] = field(default_factory=list)  # absent, or could not be written (the reason)

    def sync(self) -> str:
        """What keeps the host's clock, in words."""
        running = [name for name, on in self.facts.sync().items() if on is True]
        chrony = self.facts.chrony
        if chrony is not None:
            running = [n if n != "chronyd" else f"chronyd (offset {chrony['offset_us']:g} us, stratum "
                                                 f"{chrony['stratum']})" for n in running] or ["chrony"]
        if not running:
            return ("no time synchronisation daemon runs: one-way latency to this host rests on mwperf's own "
                    "offset estimate")
        return ", ".join(running)

    def record(self) -> dict:
        return {"target": self.facts.target, "arch": self.facts.arch, "bundle": self.bundle.hash,
                "state": self.state, "sync": self.facts.sync(), "tuned": self.tuned, "kept": self.kept,
                "untuned": self.untuned}

    def describe(self) -> str:
        tuned = "; tuned " + ", ".join(f"{k} {a} -> {b}" for k, (a, b) in self.tuned.items()) if self.tuned else ""
        untuned = f"; not tuned: {', '.join(self.untuned)}" if self.untuned else ""
        return (f"{self.name} ({self.facts.target}): {self.facts.describe()}; bundle {self.bundle.hash[:12]} "
                f"{self.state}; time: {self.sync()}{tuned}{untuned}")


def _refuse(inv: Inventory, name: str, reason: str) -> UsageError:
    return UsageError("--inventory", str(inv.path), f"host {name}: {reason}")


def _last(text: str) -> str:
    lines = [line.strip() for line in text.replace("\r", "").splitlines() if line.strip()]
    return lines[-1] if lines else ""


def installer(bundle: Bundle, folder: Path) -> Path:
    """A self-unpacking installer of ``bundle`` (its first argument: the cache directory): a shell script
    that feeds the archive following it to :data:`mwperf.hosts.place.INSTALL`."""
    path = folder / f"install-{bundle.hash[:16]}.sh"
    command = install_command("DIR", bundle)
    shell = shlex.join(command[:4]) + ' "$1" ' + shlex.join(command[5:])
    width = 12
    head = (f"#!/bin/sh\n# mwperf's installer of bundle {bundle.hash} ({bundle.arch}): its archive follows\n"
            f"tail -c +{0:0{width}d} \"$0\" | {shell}\nexit $?\n")
    head = head.replace(f"+{0:0{width}d}", f"+{len(head.encode()) + 1:0{width}d}")
    with open(path, "wb") as out, open(bundle.path, "rb") as archive:
        out.write(head.encode())
        while chunk := archive.read(1 << 20):
            out.write(chunk)
    path.chmod(0o700)
    return path


def _play(inv: Inventory, ws: Workspace, step: str, variables: dict) -> dict[str, dict[str, dict]]:
    """One step of the playbook over every host; each host's task results (the callback's report)."""
    playbook = tool("ansible-playbook", "--inventory", str(inv.path))
    report = ws.dir / f"{step}-report.json"
    variables_file = ws.dir / f"{step}-vars.json"
    variables_file.write_text(json.dumps({"mwperf_step": step, "mwperf_dir": "", "mwperf_probe": SCRIPT,
                                          "mwperf_install": {}, "mwperf_tune": False, "mwperf_sysctls": "",
                                          **variables}))
    argv = [playbook, "-i", str(inv.path), "--limit", ",".join(inv.hosts), "-e", f"@{variables_file}",
            str(PLAYBOOK)]
    env = ws.env(MWPERF_LAB_REPORT=str(report), ANSIBLE_CALLBACK_PLUGINS=str(PLAYBOOK.parent / "callback_plugins"),
                 ANSIBLE_CALLBACKS_ENABLED="mwperf_report", ANSIBLE_SSH_USETTY="False",
                 ANSIBLE_REMOTE_TEMP="~/.cache/mwperf/.ansible-tmp", ANSIBLE_HOST_KEY_CHECKING="False")
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=STEP_TIMEOUT_S, env=env,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise UsageError("--inventory", str(inv.path), f"ansible-playbook ({step}) took over "
                                                       f"{STEP_TIMEOUT_S:.0f} s") from None
    if not report.is_file():
        said = _last(done.stderr) or _last(done.stdout) or f"exit {done.returncode}"
        raise UsageError("--inventory", str(inv.path), f"ansible-playbook ({step}): {said}")
    return json.loads(report.read_text())


def _result(inv: Inventory, results: dict, name: str, task: str) -> dict:
    """The task's result on that host; UsageError naming the host when it did not run or failed."""
    got = results.get(name, {}).get(task)
    if got is None:
        raise _refuse(inv, name, f"the playbook's {task} did not run there")
    if got["status"] == "unreachable":
        raise _refuse(inv, name, f"unreachable: {_last(got['msg'])}")
    if got["status"] != "ok":
        said = _last(got["stderr"]) or _last(got["stdout"]) or _last(got["msg"]) or f"exit {got['rc']}"
        raise _refuse(inv, name, f"{task} failed: {said.removeprefix('refused=')}")
    return got


def _tuned(host: ReadyHost, stdout: str) -> None:
    for line in stdout.replace("\r", "").splitlines():
        key, _, value = line.partition("=")
        words = value.split()
        if key == "changed" and len(words) == 3:
            host.tuned[words[0]] = [_number(words[1]), _number(words[2])]
        elif key == "kept" and len(words) == 2:
            host.kept[words[0]] = _number(words[1])
        elif key in ("absent", "failed") and words:
            host.untuned.append(f"{words[0]} ({'absent' if key == 'absent' else ' '.join(words[1:])})")


def _number(text: str) -> int | str:
    return int(text) if text.lstrip("-").isdigit() else text


def prepare(inv: Inventory, bundle_dir: Path | None, remote_dir: str | None, tune: bool,
            out: TextIO | None = None) -> dict[str, ReadyHost]:
    """Every host of ``inv`` ready (see the module's doc), by name; UsageError naming the host that cannot be."""
    check_host_text("--remote-dir", remote_dir)  # before anything runs on a host
    with Workspace() as ws:
        probed = _play(inv, ws, "probe", {"mwperf_dir": remote_dir or ""})
        chosen: dict[str, tuple[HostFacts, Bundle]] = {}
        for name, host in inv.hosts.items():
            got = _result(inv, probed, name, "probe")
            try:
                facts = parse(host.target, got["stdout"].replace("\r", ""))
                chosen[name] = (facts, choose(facts, bundle_dir))
            except ValueError as exc:
                raise _refuse(inv, name, str(exc)) from None
            except UsageError as exc:
                raise _refuse(inv, name, exc.reason) from None
        installers: dict[str, Path] = {}
        todo = {}
        for name, (facts, bundle) in chosen.items():
            if facts.installed.get(bundle.hash) != bundle.manifest_sha256:
                if bundle.hash not in installers:
                    installers[bundle.hash] = installer(bundle, ws.dir)
                todo[name] = f"{shlex.quote(str(installers[bundle.hash]))} {shlex.quote(facts.dir)}"
        sysctls = " ".join(f"{name}={value}:{how}" for name, value, how in TUNED)
        installed = _play(inv, ws, "install", {"mwperf_install": todo, "mwperf_tune": tune, "mwperf_sysctls": sysctls})
        hosts: dict[str, ReadyHost] = {}
        try:
            for name, (facts, bundle) in chosen.items():
                state = "cached"
                if name in todo:
                    said = _last(_result(inv, installed, name, "install")["stdout"])
                    if said not in ("installed", "raced"):
                        raise _refuse(inv, name, f"installing {bundle.path.name} said {said or 'nothing'}")
                    state = "copied" if said == "installed" else "raced"
                    facts.installed[bundle.hash] = bundle.manifest_sha256
                hosts[name] = ReadyHost(name, facts, bundle, state)
                if tune:
                    _tuned(hosts[name], _result(inv, installed, name, "tune")["stdout"])
        except UsageError:
            if tune:
                _play(inv, ws, "restore", {})  # what the other hosts changed, put back
            raise
    if out is not None:
        for ready in hosts.values():
            out.write(f"mwperf: {ready.describe()}\n")
        out.flush()
    return hosts


def restore(inv: Inventory, out: TextIO) -> dict[str, list[str]]:
    """What tune changed on each host, put back (as that host's file of changes says); a host where it could
    not be is warned about on ``out`` (its file kept, for the next restore). Returns what each host restored."""
    done: dict[str, list[str]] = {}
    with Workspace() as ws:
        results = _play(inv, ws, "restore", {})
    for name in inv.hosts:
        got = results.get(name, {}).get("restore")
        if got is None or got["status"] != "ok":
            why = "did not run" if got is None else (_last(got["stdout"]) or _last(got["msg"]) or got["status"])
            out.write(f"mwperf: warning: {name}: the sysctls tune changed were not all put back: {why}\n")
            continue
        done[name] = [line.partition("=")[2] for line in got["stdout"].replace("\r", "").splitlines()
                      if line.startswith("restored=")]
    out.flush()
    return done
