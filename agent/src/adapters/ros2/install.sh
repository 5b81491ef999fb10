#!/usr/bin/env bash
# Installs the ROS 2 Jazzy C API the ros2 adapter builds against (rcl,
# rmw_fastrtps_cpp with its Fast DDS, std_msgs) from PyPI wheels into a venv
# the project owns, .deps/ros2 (never the controller's .venv: the wheels'
# startup hook sets LD_LIBRARY_PATH for their Python). Idempotent; without
# them the agent is built without ros2 (scripts/install-venv-wheels.sh).
cd "$(dirname "$0")/../../../.." || exit 0
exec scripts/install-venv-wheels.sh ros2 .deps/ros2 \
  ros-jazzy-rcl==9.2.8 ros-jazzy-rmw-fastrtps-cpp==8.4.3 ros-jazzy-std-msgs==5.3.6
