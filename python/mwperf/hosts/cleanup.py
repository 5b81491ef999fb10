"""What a run leaves on a far host, cleaned there (the controller's own host:
:mod:`mwperf.execute.cleanup`), before the first point and after the last, in
one ssh session per host, as the ssh user (only what that user may remove):

* agents of this cache (or ``--agent``'s path) whose ssh session is gone (no
  ``sshd`` among their ancestors below the host's PID 1: a crashed
  controller's), killed; an agent whose session is alive is another run's and
  is left alone;
* the shared-memory files the bundle's adapters say they may leave
  (``leftovers`` in its description) that are this user's and that no
  process has open or mapped; then the agent's own ``cleanup`` (what globs
  cannot name);
* old bundles beyond the newest :data:`KEEP` (by last use: the bundles of this
  run are touched first), never one an agent runs from, and unpacking
  directories (``.partial-*``) of installs that died over an hour ago.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field

from mwperf.execute.ssh import ssh_argv

__all__ = ["KEEP", "SCRIPT", "FarLeftovers", "clean_far"]

#: How many bundles a far host keeps (the newest by last use).
KEEP = 3

#: $1 cache dir, $2 how many bundles to keep, $3 the agent (its path), $4 the bundles in use (hashes,
#: space-separated), $5 the shared-memory patterns (space-separated globs of file names in /dev/shm).
SCRIPT = r"""
d=$1; keep=$2; agent=$3; used=$4; shm=$5
me=$(id -u)
for h in $used; do [ -d "$d/$h" ] && touch "$d/$h"; done
agents() { for p in /proc/[0-9]*; do
  [ -O "$p" ] || continue
  a=$(tr '\0' '\n' < "$p/cmdline" 2>/dev/null | head -n 3 | grep -x -e "$agent" -e "$d/[0-9a-f]*/mwperf-agent" | head -n 1)
  [ -n "$a" ] && echo "${p#/proc/} $a"
done; }
session() { p=$1; while :; do
  p=$(sed -n 's/^PPid:[[:space:]]*//p' "/proc/$p/status" 2>/dev/null)
  [ -n "$p" ] && [ "$p" -gt 1 ] || return 1
  [ "$(cat "/proc/$p/comm" 2>/dev/null)" = sshd ] && return 0
done; }
agents | while read -r pid a; do
  session "$pid" && continue
  kill -9 "$pid" 2>/dev/null && echo "killed=$pid $a"
done
if [ -n "$shm" ]; then
  refs=$(for p in /proc/[0-9]*; do ls -l "$p/fd" 2>/dev/null | sed -n 's|.* -> \(/dev/shm/.*\)$|\1|p'
         sed -n 's|^.* \(/dev/shm/.*\)$|\1|p' "$p/maps" 2>/dev/null; done | sort -u)
  for pat in $shm; do for f in /dev/shm/$pat; do
    [ -f "$f" ] && [ -O "$f" ] || continue
    printf '%s\n' "$refs" | grep -q -x -F "$f" && continue
    rm -f "$f" && echo "segment=${f#/dev/shm/}"
  done; done
fi
[ -x "$agent" ] && "$agent" cleanup </dev/null 2>/dev/null | sed -n 's/.*"removed":\[\(.*\)\].*/cleaned=\1/p'
if [ -d "$d" ]; then
  running=$(agents | sed -n 's|.*/\([0-9a-f]*\)/mwperf-agent$|\1|p')
  n=0
  for b in $(ls -1t "$d" 2>/dev/null); do
    case "$b" in *[!0-9a-f]*) continue;; esac
    n=$((n + 1))
    [ "$n" -le "$keep" ] && continue
    case " $used $running " in *" $b "*) continue;; esac
    rm -rf "$d/$b" && echo "bundle=$b"
  done
  find "$d" -maxdepth 1 -name '.partial-*' -mmin +60 -exec rm -rf {} + -exec echo partial={} \; 2>/dev/null
fi
echo end=1
"""


@dataclass
class FarLeftovers:
    """What the clean-up of one host removed."""

    target: str
    killed: list[str] = field(default_factory=list)
    segments: list[str] = field(default_factory=list)
    cleaned: list[str] = field(default_factory=list)
    bundles: list[str] = field(default_factory=list)
    partial: list[str] = field(default_factory=list)
    error: str | None = None

    def summary(self) -> str | None:
        parts = [f"{len(v)} {what}" for what, v in (("agent(s) of a crashed run", self.killed),
                                                    ("shared-memory segment(s)", self.segments),
                                                    ("old bundle(s)", self.bundles),
                                                    ("unfinished install(s)", self.partial)) if v]
        parts += self.cleaned
        return f"{self.target}: removed {', '.join(parts)}" if parts else None


def clean_far(target: str, options: tuple[str, ...], cache_dir: str, agent: str, used: list[str],
              shm_patterns: tuple[str, ...], keep: int = KEEP, timeout: float = 120.0) -> FarLeftovers:
    """Clean one far host; never raises (``error`` says what went wrong)."""
    left = FarLeftovers(target)
    argv = ssh_argv(target, options, ["sh", "-c", SCRIPT, "mwperf-clean", cache_dir, str(keep), agent,
                                      " ".join(used), " ".join(shm_patterns)])
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError) as exc:
        left.error = str(exc)
        return left
    for line in done.stdout.splitlines():
        key, _, value = line.partition("=")
        if key == "killed":
            left.killed.append(value)
        elif key == "segment":
            left.segments.append(value)
        elif key == "cleaned" and value:
            left.cleaned.append(value.replace('"', ""))
        elif key == "bundle":
            left.bundles.append(value)
        elif key == "partial":
            left.partial.append(value)
    if "end=1" not in done.stdout.splitlines():
        left.error = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
    return left
