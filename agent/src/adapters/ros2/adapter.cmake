# ROS 2 Jazzy through rcl, from the PyPI wheels (ros-jazzy-rcl, -rmw-fastrtps-cpp,
# -std-msgs) in a prefix the project owns (install.sh, here). The wheels'
# CMake configs need ament and a Python that is not there, so the headers and
# libraries are taken from the prefix directly.
#
# The wheels bring Fast DDS 2.14, which must never share a process with
# Debian's Fast DDS 2.9 of the fastdds adapter: the agent loads one plugin per
# process, and the unit tests are a binary of their own (mwperf_apart). Their
# libraries need a DT_RPATH of their own, the plugin's.
include(${CMAKE_CURRENT_LIST_DIR}/wheels.cmake)  # MWPERF_ROS2_PREFIX, mwperf_ros2_wheel_rpath
if(NOT EXISTS "${MWPERF_ROS2_PREFIX}/include/rcl/rcl/rcl.h")
  mwperf_adapter_missing(ros2 "rcl not found under ${MWPERF_ROS2_PREFIX} (agent/src/adapters/ros2/install.sh installs the ROS 2 Jazzy wheels there)")
  return()
endif()
file(GLOB ros2_includes LIST_DIRECTORIES true "${MWPERF_ROS2_PREFIX}/include/*")
list(FILTER ros2_includes EXCLUDE REGEX "/python3")
list(APPEND ros2_includes "${MWPERF_ROS2_PREFIX}/include")
# No rmw implementation is linked here: rcl brings the one it loads (RMW_IMPLEMENTATION).
mwperf_find_libraries(ros2 "${MWPERF_ROS2_PREFIX}/lib" ros2_libraries rcl rmw rcutils rosidl_runtime_c
                      std_msgs__rosidl_generator_c std_msgs__rosidl_typesupport_c)
if(NOT ros2_libraries)
  return()
endif()
mwperf_adapter(ros2 ros2.cpp)
target_include_directories(mwperf_adapter_ros2 SYSTEM PRIVATE ${ros2_includes})
target_link_libraries(mwperf_adapter_ros2 PUBLIC ${ros2_libraries} ${CMAKE_DL_LIBS})
get_filename_component(ros2_prefix_real "${MWPERF_ROS2_PREFIX}" REALPATH)
# Where the ament index of the installed rmw implementations is (next to AMENT_PREFIX_PATH's).
target_compile_definitions(mwperf_adapter_ros2 PRIVATE MWPERF_ROS2_PREFIX="${ros2_prefix_real}")

# The plugin (and its unit tests): the wheels' own library folders on its
# DT_RPATH (their RUNPATHs point elsewhere, and DT_RPATH also reaches the
# libraries rcutils dlopens), and the CPython stand-ins exported.
mwperf_apart(ros2)
mwperf_ros2_wheel_rpath(mwperf_plugin_ros2 mwperf_agent_tests_ros2)
foreach(target mwperf_plugin_ros2 mwperf_agent_tests_ros2)
  if(TARGET ${target})
    target_sources(${target} PRIVATE ${CMAKE_CURRENT_LIST_DIR}/ros2_pystub.cpp)
    set_target_properties(${target} PROPERTIES ENABLE_EXPORTS ON)
  endif()
endforeach()
