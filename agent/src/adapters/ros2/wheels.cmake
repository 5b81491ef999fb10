# What the adapters on the PyPI ROS 2 Jazzy wheels share (ros2, and
# fastdds-jazzy on the wheels' Fast DDS 2.14): where the wheels are
# (install.sh, here) and how a plugin finds their libraries.
set(MWPERF_ROS2_PREFIX "${CMAKE_CURRENT_SOURCE_DIR}/../.deps/ros2" CACHE PATH
    "prefix holding the ROS 2 wheels (a venv)")

# mwperf_ros2_wheel_rpath(TARGET...): the wheels' own library folders on each
# target's DT_RPATH. Their libraries' RUNPATHs/RPATHs point elsewhere (libfastrtps's
# $ORIGIN/../../../ros_fastrtps.libs is not where the prefix's lib/ copy is), and
# a DT_RPATH also reaches what they load (libtinyxml2, libssl, the libraries
# rcutils dlopens); missing targets are passed over.
function(mwperf_ros2_wheel_rpath)
  file(GLOB wheel_libs LIST_DIRECTORIES true "${MWPERF_ROS2_PREFIX}/lib/python3*/site-packages/ros_*.libs")
  foreach(target ${ARGN})
    if(TARGET ${target})
      set_target_properties(${target} PROPERTIES BUILD_RPATH "${MWPERF_ROS2_PREFIX}/lib;${wheel_libs}")
      target_link_options(${target} PRIVATE "-Wl,--disable-new-dtags")
    endif()
  endforeach()
endfunction()
