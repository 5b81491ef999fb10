# ros2-kilted: the ros2 adapter's own source (../ros2/ros2.cpp) on ROS 2 Kilted's
# rcl 10.1 and rmw_fastrtps_cpp 9.3 (Fast DDS 3.2) from the PyPI wheels
# (install.sh, here), a plugin of its own: Jazzy's and Kilted's libraries have
# the same names and never share a process.
include(${CMAKE_CURRENT_LIST_DIR}/../ros2/wheels.cmake)
mwperf_ros2_on_wheels(ros2-kilted "${MWPERF_KILTED_PREFIX}" agent/src/adapters/ros2-kilted/install.sh)
