#!/usr/bin/env bash
# Runs a command with a RouDi of its own (the iceoryx adapter's daemon), as
# the controller does for an iceoryx point: `with-roudi.sh CONFIG CMD ARGS...`.
# Refuses when another RouDi runs (there can be only one per machine), and
# removes what RouDi and the command's runtimes leave, whatever happens.
set -u
config=$1; shift
if pgrep -x iox-roudi >/dev/null; then echo "with-roudi.sh: another iox-roudi is running" >&2; exit 1; fi
command -v iox-roudi >/dev/null || { echo "with-roudi.sh: iox-roudi is not installed (Debian: iceoryx)" >&2; exit 1; }
log=$(mktemp /tmp/mwperf-roudi.XXXXXX)
iox-roudi -c "$config" -m off >"$log" 2>&1 </dev/null &
roudi=$!
cleanup() {
  kill -TERM "$roudi" 2>/dev/null
  for _ in $(seq 100); do kill -0 "$roudi" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$roudi" 2>/dev/null
  rm -f "$log" /dev/shm/iceoryx_mgmt "/dev/shm/$(id -un)" /tmp/roudi /tmp/roudi.lock /tmp/iox-unique-roudi.lock \
        /tmp/mwperf-iox-*
}
trap cleanup EXIT
for _ in $(seq 100); do grep -q "RouDi is ready for clients" "$log" && break; sleep 0.1; done
grep -q "RouDi is ready for clients" "$log" || { echo "with-roudi.sh: RouDi did not come up: $(tail -3 "$log")" >&2; exit 1; }
MWPERF_TEST_SERVICE_ROUDI=1 "$@"
