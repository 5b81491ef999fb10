#!/usr/bin/env bash
# Installs the ROS 2 Jazzy C API the ros2 adapter builds against (rcl,
# rmw_fastrtps_cpp with its Fast DDS, std_msgs) from PyPI wheels into a venv
# the project owns, .deps/ros2 (never the controller's .venv: the wheels'
# startup hook sets LD_LIBRARY_PATH for their Python). Idempotent. When it
# cannot (no network, no wheel for this Python), it says why and the agent is
# built without ros2 (`mwperf-agent list` names the reason).
set -uo pipefail
cd "$(dirname "$0")/.."
prefix=".deps/ros2"
wheels=(ros-jazzy-rcl==9.2.8 ros-jazzy-rmw-fastrtps-cpp==8.4.3 ros-jazzy-std-msgs==5.3.6)
stamp="$prefix/.installed-${wheels[*]// /_}"
[ -f "$stamp" ] && exit 0
echo "install-ros2: ${wheels[*]} -> $prefix"
if python3 -m venv "$prefix" && "$prefix/bin/pip" install -q --disable-pip-version-check "${wheels[@]}"; then
  touch "$stamp"
else
  echo "install-ros2: warning: could not install the ROS 2 wheels; the agent is built without ros2" >&2
fi
exit 0
