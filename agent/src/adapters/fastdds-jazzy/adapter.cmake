# fastdds-jazzy: the fastdds adapter's own source (../fastdds/fastdds.cpp)
# built against the Fast DDS 2.14 / Fast CDR 2 that the ROS 2 Jazzy wheels
# bring (../ros2/install.sh), the very libraries ros2's rmw_fastrtps_cpp
# runs on: the base the ROS overhead table pairs ros2 with (the Debian fastdds
# adapter is Fast DDS 2.9 / Fast CDR 1).
#
# Fast DDS 2.14 must never share a process with Debian's 2.9: the agent loads
# one plugin per process, and the unit tests are a binary of their own
# (mwperf_apart). Only the wheels' headers are on its include path (before the
# system's, where Debian's 2.9 headers are).
include(${CMAKE_CURRENT_LIST_DIR}/../ros2/wheels.cmake)
mwperf_fastdds_on_wheels(fastdds-jazzy "${MWPERF_ROS2_PREFIX}" agent/src/adapters/ros2/install.sh fastrtps/config.h fastrtps)
