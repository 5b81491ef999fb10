#!/usr/bin/env bash
# Installs the ROS 2 Kilted C API the ros2-kilted and fastdds3 adapters build
# against (rcl 10.1, rmw_fastrtps_cpp 9.3 with its Fast DDS 3.2 / Fast CDR 2.3,
# std_msgs) from PyPI wheels into a venv of its own, .deps/kilted: Kilted's
# metapackages pull unprefixed packages (ros-rcl, ros-fastdds ...) with the same
# names as Jazzy's in .deps/ros2 at other versions, so the two never share a
# prefix. Idempotent; without them the agent is built without ros2-kilted and
# fastdds3 (scripts/install-venv-wheels.sh).
cd "$(dirname "$0")/../../../.." || exit 0
exec scripts/install-venv-wheels.sh kilted .deps/kilted \
  ros-kilted-rcl==10.1.3 ros-kilted-rmw-fastrtps-cpp==9.3.3 ros-kilted-std-msgs==5.5.1
