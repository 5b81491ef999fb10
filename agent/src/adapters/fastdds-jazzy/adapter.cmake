# fastdds-jazzy: the fastdds adapter's own source (../fastdds/fastdds.cpp)
# built against the Fast DDS 2.14 / Fast CDR 2 that the ROS 2 Jazzy wheels
# bring (../ros2/install.sh), the very libraries ros2's rmw_fastrtps_cpp
# runs on: the base the ROS overhead table pairs ros2 with (the Debian fastdds
# adapter is Fast DDS 2.9 / Fast CDR 1). ../fastdds/fastcdr_compat.h covers
# the Fast CDR 1 / 2 differences.
#
# Fast DDS 2.14 must never share a process with Debian's 2.9: the agent loads
# one plugin per process, and the unit tests are a binary of their own
# (mwperf_apart). Only the wheels' headers are on its include path (before the
# system's, where Debian's 2.9 headers are).
include(${CMAKE_CURRENT_LIST_DIR}/../ros2/wheels.cmake)  # MWPERF_ROS2_PREFIX, mwperf_ros2_wheel_rpath
if(NOT EXISTS "${MWPERF_ROS2_PREFIX}/include/fastrtps/config.h" OR NOT EXISTS "${MWPERF_ROS2_PREFIX}/include/fastcdr/config.h")
  mwperf_adapter_missing(fastdds-jazzy "Fast DDS headers not found under ${MWPERF_ROS2_PREFIX}/include (agent/src/adapters/ros2/install.sh installs the ROS 2 Jazzy wheels there)")
  return()
endif()
mwperf_find_libraries(fastdds-jazzy "${MWPERF_ROS2_PREFIX}/lib" fastdds_jazzy_libraries fastrtps fastcdr)
if(NOT fastdds_jazzy_libraries)
  return()
endif()
mwperf_adapter(fastdds-jazzy ../fastdds/fastdds.cpp)
target_include_directories(mwperf_adapter_fastdds-jazzy SYSTEM BEFORE PRIVATE "${MWPERF_ROS2_PREFIX}/include")
target_link_libraries(mwperf_adapter_fastdds-jazzy PUBLIC ${fastdds_jazzy_libraries})
# The one source, two adapters: its name and factory (make_fastdds_jazzy_adapter).
target_compile_definitions(mwperf_adapter_fastdds-jazzy PRIVATE MWPERF_FASTDDS_NAME="fastdds-jazzy"
                           MWPERF_FASTDDS_MAKE=make_fastdds_jazzy_adapter)
mwperf_apart(fastdds-jazzy)
mwperf_ros2_wheel_rpath(mwperf_plugin_fastdds-jazzy mwperf_agent_tests_fastdds-jazzy)
