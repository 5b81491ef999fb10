# ROS 2 Jazzy through rcl, from the PyPI wheels (ros-jazzy-rcl, -rmw-fastrtps-cpp,
# -std-msgs) in a prefix the project owns (install.sh, here). The wheels'
# CMake configs need ament and a Python that is not there, so the headers and
# libraries are taken from the prefix directly (wheels.cmake, which ros2-kilted
# shares).
#
# The wheels bring Fast DDS 2.14, which must never share a process with
# Debian's Fast DDS 2.9 of the fastdds adapter: the agent loads one plugin per
# process, and the unit tests are a binary of their own (mwperf_apart). Their
# libraries need a DT_RPATH of their own, the plugin's.
include(${CMAKE_CURRENT_LIST_DIR}/wheels.cmake)
mwperf_ros2_on_wheels(ros2 "${MWPERF_ROS2_PREFIX}" agent/src/adapters/ros2/install.sh)
