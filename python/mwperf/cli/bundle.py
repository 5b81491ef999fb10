"""``mwperf bundle --arch x86_64|aarch64 [--out DIR]``: the self-contained
agent bundle for an architecture (mwperf.bundle): the agent, its adapter
plugins and every library they load beyond glibc, with a manifest and the
bundled agent's own description. Prints the archive, its size, the oldest
glibc it needs and the adapters it lacks (with the reason)."""

from __future__ import annotations

import argparse
import sys
import time

from mwperf.errors import BadInput

__all__ = ["add_parser", "command"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bundle", help="build the self-contained agent bundle a far host runs (x86_64, aarch64)",
                       description="Build the agent for an architecture with every library it loads beyond glibc "
                                   "(found through $ORIGIN), its manifest (versions, oldest glibc, content hash) and "
                                   "its own description, as one archive: what --hosts puts on a far host. aarch64 is "
                                   "cross-built (scripts/install-cross-arm64.sh installs what that needs). Unchanged "
                                   "inputs: the archive built before, at once.",
                       epilog="examples:\n  mwperf bundle --arch x86_64\n  mwperf bundle --arch aarch64 --out /tmp/b",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--arch", required=True, metavar="x86_64|aarch64", help="the far host's architecture (uname -m)")
    p.add_argument("--out", metavar="DIR", default=None,
                   help="where the archive goes (default: bundles/ in the checkout)")
    p.add_argument("--rebuild", action="store_true", help="assemble it again even when its inputs are unchanged")
    p.set_defaults(func=command)


def command(args: argparse.Namespace, command_line: list[str]) -> int:
    from mwperf.bundle import BundleError, build, read_manifest

    started = time.monotonic()
    try:
        path = build(args.arch, args.out, log=lambda line: print(line, file=sys.stderr), cache=not args.rebuild)
        manifest = read_manifest(path)
    except BundleError as exc:
        if str(exc).startswith("--"):
            raise BadInput(str(exc)) from None
        sys.stderr.write(f"mwperf: error: bundle: {' '.join(str(exc).split())}\n")
        return 1
    built = sorted(name for name, a in manifest.adapters.items() if a.get("built"))
    print(path)
    print(f"  {manifest.arch}, agent {manifest.agent_version}, hash {manifest.hash12}, "
          f"{path.stat().st_size / 1e6:.1f} MB, glibc >= {manifest.glibc_min} "
          f"({', '.join(manifest.glibc_min_by)}), "
          f"{time.monotonic() - started:.1f} s")
    print(f"  adapters: {', '.join(built)}")
    for name, why in sorted(manifest.absent().items()):
        print(f"  absent: {name}: {why}")
    return 0
