"""Every command of the README's and the documentation's examples works (issue 17,
item 9; issue 40: the examples moved with their text into docs/ and stay tested there).

The commands are read from the code blocks of README.md and of every page of the
documentation site (docs/, in mkdocs.yml's order); a command written on several pages is
one example. Each must be listed in :data:`HOW` with the way it is checked, so a new example
cannot go untested:

* ``as written``: run exactly as the page writes it;
* ``shortened``: run as written but for ``--duration 200ms --warmup 0s --no-floor``
  (``baseline``: ``--duration 1s``) appended, so that the examples take a minute and not an
  hour (the floor has tests of its own); every other option is the page's;
* ``interrupted``: the rate-matrix sweep (540 points of 30 s), its ``--resume``, the
  interop and the security sweeps: started as written, interrupted (Ctrl-C) once the first point runs, which
  must end as an interrupted run does (exit 130, results kept);
* ``validated``: needs two real hosts (``--hosts``): parsed and validated by the command
  line's own code against the agent's recorded description; no ssh is started, no packet sent;
* ``not run``: ``make run`` installs packages (network), ``make test`` runs this very test
  and builds the site (``make docs``), ``make setup`` and the bundles' builds are what ``make
  run`` and the far hosts' tests (python/tests/hosts) do;
* ``lab``: needs a lab of real hosts (an Ansible inventory): ``lab prepare`` and ``sweep
  --inventory --pairs`` run against the tests' hosts (namespaces with their own sshd) in
  python/tests/lab/test_lab_sweep.py, ``report --host-pair`` on a lab's records in
  python/tests/lab/test_host_pair.py.

They run in a temporary directory (``results/...`` lands there; ``plans`` links to the
repository's), in the order a reader meets them (the README first, then the site's pages); a
shortened ``mwperf run`` on loopback that no later example reads (no ``--out``, no
``--link``) runs in a test of its own, side by side with other tests (measuring.py: it
asserts the exit code and no traceback, which a loaded machine keeps); ``compare`` gets its
``results/before`` and ``results/after`` from two short runs made for it, the imports their
input files from tests/fixtures.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from conftest import FIXTURES, described, real_agent_path

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
DOCS = REPO / "docs"

SHORT_RUN = ["--duration", "200ms", "--warmup", "0s", "--no-floor"]

HOW = {
    "make run": "not run",
    "make test": "not run",
    "mwperf run --mw udp,cyclonedds,zenoh --mode latency --size 32,1k,63000 --duration 5s --out results/mine":
        "shortened",
    "mwperf run --mw udp --mode throughput --size 1k --duration 10s": "shortened",
    "mwperf run --mw udp --mode rate --rate 100,1000,10000 --size 1k --duration 5s": "shortened",
    "mwperf report results/mine": "as written",
    "mwperf report results/mine --format md": "as written",
    "mwperf report results/mine --format svg": "as written",
    "mwperf doctor": "as written",
    "mwperf floor --cpu 0,0 --cpu 0,1 --size 32,1k,63000": "as written",
    # minutes of points: python/tests/execute/test_discovery.py and cli/test_discovery_cli.py run the mode
    "mwperf run --mode discovery --mw cyclonedds,fastdds --participants 2,5,10,20 --topics 1,10": "not run",
    "mwperf sweep plans/discovery.yaml": "not run",
    "mwperf sweep plans/discovery-wifi.yaml": "not run",
    # execute/test_discovery_ros2.py runs ROS 2's participants, on loopback and on a namespace pair
    "mwperf run --mode discovery --mw ros2 --participants 2,5,10,20 --topics 1,10 --discovery unicast": "not run",
    "mwperf run --mode discovery --mw ros2 --participants 2,5,10,20 --topics 1,10 --discovery unicast,default,tuned "
    "--link netns": "not run",
    "mwperf run --mode discovery --mw cyclonedds,fastdds --participants 2,5,10,20 --topics 1,10 --discovery unicast":
        "not run",
    "mwperf ls results/": "as written",
    "mwperf sweep plans/rate-matrix.yaml --dry-run": "as written",
    "mwperf sweep plans/rate-matrix.yaml --out results/matrix": "interrupted",
    "mwperf sweep --resume results/matrix": "interrupted",
    "mwperf max-rate --mw udp --size 1k --loss 1% --link netns:rate=10mbit": "shortened",
    "mwperf max-rate plans/max-rate.yaml --dry-run": "as written",
    "mwperf run --mw udp,cyclonedds --mode rate --rate 1000 --size 1k --link netns:gige": "shortened",
    "mwperf run --mw udp --mode rate --rate 5000 --size 256 --link netns:lossy:5%": "shortened",
    "mwperf baseline --link netns:gige --out results/mine": "shortened",
    "mwperf doctor --cleanup": "as written",
    "mwperf run --mw cyclonedds,fastdds --mode rate --rate 10 --size 4k,2MiB "
    "--hosts pub=me@10.0.0.1,sub=me@10.0.0.2 --direction both --nic eth1": "validated",
    "mwperf compare results/before results/after": "as written",
    "mwperf compare results/before results/after --fail-if-slower 5 --fail-if-lossier 1": "as written",
    "mwperf export results/mine --format perftest-csv": "as written",
    "mwperf import perftest connext-tables.txt --mw connext": "as written",
    "mwperf import ddsperf ddsperf-ping.txt": "as written",
    "mwperf db ingest results/mine": "as written",
    "mwperf db info": "as written",
    "mwperf history --mw udp --size 1k": "as written",
    "mwperf report results/mine --db": "as written",
    "mwperf check budgets/quick.yaml results/mine": "as written",
    "mwperf check budgets/quick.yaml --db": "as written",
    "mwperf run --mw cyclonedds,fastdds --mode throughput --size 1k,64k --reliability reliable,best-effort": "shortened",
    "mwperf run --mw fastdds --transport udp,shm --mode latency --size 32,63000": "shortened",
    "mwperf run --mw cyclonedds --keyed --instances 100000 --mode rate --rate 1000 --size 64": "shortened",
    "mwperf run --mw fastdds --async --mode throughput --size 4MiB --history keep-all": "shortened",
    "mwperf run --mw cyclonedds,zenoh --mode burst --demand 10,110,210,310 --size 48,160 --burst-gap 10ms": "shortened",
    "mwperf run --mw cyclonedds --mode rate --rate 1000 --subscribers 1,4,16": "shortened",
    "mwperf run --mw fastdds --mode rate --rate 1000 --subscribers 3 --slow-subscriber 5ms "
    "--reliability best-effort": "shortened",
    "mwperf run --mw cyclonedds --mode rate --rate 1000 --subscribers 4 --subscribers-as threads": "shortened",
    "mwperf run --mw connext --peer-mw cyclonedds --mode rate --rate 1000 --size 1k": "shortened",
    "mwperf sweep plans/interop.yaml --out results/interop": "interrupted",
    "mwperf run --mw cyclonedds,fastdds --transport udp --security none,encrypt": "shortened",
    "mwperf sweep plans/security.yaml": "interrupted",
    "make setup": "not run",
    "make bundle": "not run",
    "make bundle-aarch64": "not run",
    "mwperf lab prepare --inventory lab.yml": "lab",
    "mwperf sweep link.yaml --inventory lab.yml --pairs laptop:pi,laptop:jetson --out results/lab": "lab",
    "mwperf report results/lab": "lab",
    "mwperf report results/lab --host-pair laptop:pi": "lab",
}

#: Exit codes a command may end with (0 unless listed), and why.
EXIT = {
    # the gate compares two real runs of a few hundred ms: any verdict (3: cannot decide) is the command working
    "mwperf compare results/before results/after --fail-if-slower 5 --fail-if-lossier 1": (0, 1, 3),
    # budgets/quick.yaml is for make run's points; results/mine is the tour's latency run, so some of its
    # budgets match no point (exit 1); the command working is what is checked here
    "mwperf check budgets/quick.yaml results/mine": (0, 1, 3),
    "mwperf check budgets/quick.yaml --db": (0, 1, 3),
}


#: Loopback runs that stay in the serial chain all the same: Fast DDS's asynchronous 4 MiB keep-all
#: publisher, on a loaded machine, took longer than its exit deadline after its result (1 in 3 side by side).
APART = {"mwperf run --mw fastdds --async --mode throughput --size 4MiB --history keep-all"}


def side_by_side(command: str) -> bool:
    """A shortened loopback ``mwperf run`` whose results no other example reads."""
    words = command.split()
    return (HOW.get(command) == "shortened" and words[1] == "run" and "--out" not in words
            and not any(w.startswith("--link") for w in words) and command not in APART)


def pages() -> list[Path]:
    """README.md, then the site's pages in mkdocs.yml's order (then any page the nav lacks)."""
    nav: list[str] = []

    def walk(node) -> None:
        if isinstance(node, str):
            nav.append(node)
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))["nav"])
    listed = [DOCS / page for page in nav]
    rest = sorted(p for p in DOCS.rglob("*.md") if p not in listed)
    return [README, *listed, *rest]


def page_commands(text: str) -> list[str]:
    """The mwperf and make commands of a page's code blocks, in order (continuation lines
    joined, comments dropped)."""
    commands = []
    for block in re.findall(r"^```[a-z]*\n(.*?)^```", text, re.S | re.M):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("  #")[0].strip()
            if re.match(r"(mwperf|make) ", line):
                commands.append(" ".join(line.split()))
    return commands


def readme_commands() -> list[str]:
    """Every example command of the README and the site's pages, once each, in reading order."""
    return list(dict.fromkeys(c for page in pages() for c in page_commands(page.read_text(encoding="utf-8"))))


def test_every_readme_example_is_checked():
    commands = readme_commands()
    unknown = [c for c in commands if c not in HOW]
    assert not unknown, f"examples of the README or docs/ this test does not know (add them to HOW): {unknown}"
    gone = [c for c in HOW if c not in commands]
    assert not gone, f"no longer in the README or docs/ (remove them from HOW): {gone}"


def test_the_examples_are_read_from_every_page():
    """A command on a page of the site (not in the README) is an example too, and one written
    on two pages is one."""
    page = "# p\n\n```\nmwperf ls results/   # twice\nmwperf ls results/\nmwperf run --mw udp \\\n  --size 64\n```\n"
    assert page_commands(page) == ["mwperf ls results/", "mwperf ls results/", "mwperf run --mw udp --size 64"]
    by_page = {p.relative_to(REPO).as_posix(): page_commands(p.read_text(encoding="utf-8")) for p in pages()}
    assert any(c for name, cs in by_page.items() if name != "README.md" for c in cs if c not in by_page["README.md"])
    assert "docs/guide/measure.md" in by_page and "docs/agent-protocol.md" in by_page


def test_every_run_example_validates():
    """Every ``mwperf run`` of the README, checked as the command line checks
    it, against the recorded agent description; nothing runs."""
    from mwperf.cli import discovery
    from mwperf.cli.main import build_parser
    from mwperf.plan.discovery_plan import parse_lists
    from mwperf.cli.run import request
    from mwperf.plan.validate import build_run_options

    for command in (c for c in readme_commands() if c.startswith("mwperf run ")):
        ns = build_parser().parse_args(shlex.split(command)[1:])
        if discovery.wanted(ns):  # discovery mode: its lists as the mode checks them
            given = {"mw": ns.mw, "link": ns.link, **{n: getattr(ns, f"disc_{discovery.ROWS[n].key}")
                                                      for n in discovery.USER}}
            assert parse_lists(given)[1]["participants"], command
            continue
        opts = build_run_options(request(ns), described(), agent="mwperf-agent", cpu_count=2)
        assert opts.points(), command


# -- running them ---------------------------------------------------------------------------

def _argv(command: str) -> list[str]:
    argv = [sys.executable, "-m", "mwperf", *shlex.split(command)[1:]]
    if HOW[command] == "shortened":
        argv += ["--duration", "1s"] if argv[3] == "baseline" else SHORT_RUN
    return argv


def _interrupted(argv: list[str], cwd: Path, env: dict) -> tuple[int, str]:
    """Run until the first point is being measured, then Ctrl-C it; (exit code, stderr)."""
    log = cwd / "interrupted.err"
    with open(log, "w") as err:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.monotonic() + 60
        while "[1/" not in log.read_text() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.0)  # into the point
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:  # pragma: no cover
            proc.kill()
            proc.wait()
    return proc.returncode, log.read_text()


def _failure(command: str, cwd: Path, env: dict) -> str | None:
    """Run one example as :data:`HOW` says; what went wrong, or None."""
    if HOW[command] == "interrupted":
        code, stderr = _interrupted(_argv(command), cwd, env)
        ok = code == 130 and "interrupted; results so far are kept" in stderr
    else:
        done = subprocess.run(_argv(command), cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
        code, stderr = done.returncode, done.stderr
        ok = code in EXIT.get(command, (0,))
    if not ok or "Traceback" in stderr:
        return f"{command} ({HOW[command]}): exit {code}\n{stderr[-1500:]}"
    return None


def _agent() -> Path:
    agent = real_agent_path()
    if agent is None:
        pytest.skip("the agent binary is not built yet (agent/build/mwperf-agent)")
    return agent


@pytest.mark.e2e
@pytest.mark.side_by_side
@pytest.mark.usefixtures("no_packet_leaves_loopback", "no_shm_leftovers")
@pytest.mark.parametrize("command", [c for c in readme_commands() if side_by_side(c)])
def test_a_loopback_run_example_runs(command, tmp_path):
    failure = _failure(command, tmp_path, dict(os.environ, MWPERF_AGENT=str(_agent())))
    assert failure is None, failure


def needs_the_machine(command: str) -> bool:
    """An example of the serial chain that must have the machine to itself: a namespace link (root,
    tc), the floor (timing), the cleanup of stale segments, or one of :data:`APART`."""
    words = command.split()
    return (any(w.startswith("--link") for w in words) or words[1] in ("floor", "baseline")
            or command == "mwperf doctor --cleanup" or command in APART)


def _chain(tmp_path: Path, apart: bool) -> list[str]:
    """Runs, in the reader's order, the examples of the serial chain that need the machine to themselves
    (``apart``) or those that do not; the failures."""
    env = dict(os.environ, MWPERF_AGENT=str(_agent()))
    (tmp_path / "plans").symlink_to(REPO / "plans")
    (tmp_path / "budgets").symlink_to(REPO / "budgets")
    shutil.copy(FIXTURES / "perftest-docs.txt", tmp_path / "connext-tables.txt")
    shutil.copy(FIXTURES / "ddsperf-ping.txt", tmp_path / "ddsperf-ping.txt")
    failures = []
    for command in readme_commands():
        if HOW[command] in ("not run", "validated", "lab") or side_by_side(command):
            continue
        if needs_the_machine(command) != apart:
            continue
        if command.startswith("mwperf compare") and not (tmp_path / "results" / "after").exists():
            for side in ("before", "after"):
                subprocess.run([sys.executable, "-m", "mwperf", "run", "--mw", "udp", "--mode", "latency", "--size",
                                "64", *SHORT_RUN, "--out", f"results/{side}"], cwd=tmp_path, env=env, check=True,
                               capture_output=True, timeout=120)
        failure = _failure(command, tmp_path, env)
        if failure:
            failures.append(failure)
    return failures


@pytest.mark.e2e
@pytest.mark.usefixtures("no_packet_leaves_loopback", "no_shm_leftovers")
def test_the_readme_examples_that_need_the_machine_run(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("the --link netns examples need root")
    failures = _chain(tmp_path, apart=True)
    assert not failures, "\n\n".join(failures)
    assert (tmp_path / "results" / "mine" / "baseline.json").is_file()


@pytest.mark.e2e
@pytest.mark.side_by_side
@pytest.mark.usefixtures("no_packet_leaves_loopback", "no_shm_leftovers")
def test_the_other_readme_examples_run(tmp_path):
    """The rest of the chain (the tour's run and what reads it, the sweeps interrupted, the imports, the
    store): side by side, their exit codes and no traceback asserted, which a loaded machine keeps."""
    failures = _chain(tmp_path, apart=False)
    assert not failures, "\n\n".join(failures)
    assert (tmp_path / "results" / "mine" / "results.jsonl").is_file()
    assert (tmp_path / "results" / "matrix" / "plan.yaml").is_file()
