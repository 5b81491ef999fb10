# fastdds3: the fastdds adapter's own source (../fastdds/fastdds.cpp) built
# against the Fast DDS 3.2 / Fast CDR 2.3 that the ROS 2 Kilted wheels bring
# (../ros2-kilted/install.sh), the libraries ros2-kilted's rmw_fastrtps_cpp runs
# on. Fast DDS 3 renamed its namespaces, headers and TopicDataType's members:
# ../fastdds/fastdds_compat.h covers them. Its own process and test binary, as
# fastdds-jazzy's.
include(${CMAKE_CURRENT_LIST_DIR}/../ros2/wheels.cmake)
mwperf_fastdds_on_wheels(fastdds3 "${MWPERF_KILTED_PREFIX}" agent/src/adapters/ros2-kilted/install.sh fastdds/config.hpp fastdds)
