# ROS 1 roscpp 1.15 (Debian: libroscpp-dev, libstd-msgs-dev; the master is
# python3-rosmaster). Debian's catkin-made CMake configs give variables, no targets.
find_package(roscpp QUIET)
find_package(std_msgs QUIET)
if(NOT roscpp_FOUND OR NOT std_msgs_FOUND)
  mwperf_adapter_missing(ros1 "roscpp not found (Debian: libroscpp-dev libstd-msgs-dev)")
  return()
endif()
mwperf_adapter(ros1 ros1.cpp ros1_discovery.cpp)
target_include_directories(mwperf_adapter_ros1 SYSTEM PRIVATE ${roscpp_INCLUDE_DIRS} ${std_msgs_INCLUDE_DIRS})
target_link_libraries(mwperf_adapter_ros1 PUBLIC ${roscpp_LIBRARIES})
