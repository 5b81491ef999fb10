#!/usr/bin/env bash
# Runs a command with a rosmaster of its own on 127.0.0.1 (the ros1 adapter's
# master), as the controller does for a ros1 point: `with-rosmaster.sh CMD ARGS...`.
# Its logs go to a temporary ROS_HOME that is removed, with the master, whatever happens.
set -u
[ -x /usr/bin/rosmaster ] || { echo "with-rosmaster.sh: /usr/bin/rosmaster is not installed (Debian: python3-rosmaster)" >&2; exit 1; }
home=$(mktemp -d /tmp/mwperf-test-rosmaster.XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export ROS_MASTER_URI="http://127.0.0.1:$port" ROS_IP=127.0.0.1 ROS_HOME="$home" ROS_LOG_DIR="$home/log"
unset ROS_HOSTNAME
HOME="$home" setsid /usr/bin/rosmaster --core -p "$port" -w 3 >"$home/out" 2>&1 </dev/null &
master=$!
cleanup() { kill -TERM -- "-$master" 2>/dev/null; sleep 0.2; kill -KILL -- "-$master" 2>/dev/null; rm -rf "$home"; }
trap cleanup EXIT
for _ in $(seq 100); do
  /usr/bin/python3 -c "import xmlrpc.client as x; x.ServerProxy('$ROS_MASTER_URI').getPid('/probe')" 2>/dev/null && break
  sleep 0.1
done
MWPERF_TEST_SERVICE_ROSMASTER=1 "$@"
