#!/usr/bin/env bash
# install-venv-wheels.sh NAME PREFIX PACKAGE==VERSION...: PyPI packages an
# adapter builds against, into a venv the project owns (PREFIX, under .deps/;
# never the controller's .venv), once per set of pinned versions (a stamp).
# When it cannot (no network, no wheel for this Python), it says why and
# exits 0: the agent is then built without NAME (`mwperf-agent list` names the
# reason).
set -uo pipefail
name=$1 prefix=$2
shift 2
stamp="$prefix/.installed-${*// /_}"
[ -f "$stamp" ] && exit 0
echo "install-$name: $* -> $prefix"
if python3 -m venv "$prefix" && "$prefix/bin/pip" install -q --disable-pip-version-check "$@"; then
  touch "$stamp"
else
  echo "install-$name: warning: could not install $*; the agent is built without $name" >&2
fi
exit 0
