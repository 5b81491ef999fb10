# What the adapters on the PyPI ROS 2 wheels share: ros2 and fastdds-jazzy on
# ROS 2 Jazzy's (.deps/ros2, install.sh here), ros2-kilted and fastdds3 on
# Kilted's (.deps/kilted, ../ros2-kilted/install.sh): where the wheels are, how a
# plugin finds their libraries, and the two builds each source has on them.
set(MWPERF_ROS2_PREFIX "${CMAKE_CURRENT_SOURCE_DIR}/../.deps/ros2" CACHE PATH
    "prefix holding the ROS 2 Jazzy wheels (a venv)")
set(MWPERF_KILTED_PREFIX "${CMAKE_CURRENT_SOURCE_DIR}/../.deps/kilted" CACHE PATH
    "prefix holding the ROS 2 Kilted wheels (a venv)")

# mwperf_wheel_rpath(PREFIX TARGET...): the wheels' own library folders on each
# target's DT_RPATH. Their libraries' RUNPATHs/RPATHs point elsewhere (libfastrtps's
# $ORIGIN/../../../ros_fastrtps.libs is not where the prefix's lib/ copy is), and
# a DT_RPATH also reaches what they load (libtinyxml2, libssl, the libraries
# rcutils dlopens); missing targets are passed over.
function(mwperf_wheel_rpath prefix)
  file(GLOB wheel_libs LIST_DIRECTORIES true "${prefix}/lib/python3*/site-packages/ros_*.libs")
  foreach(target ${ARGN})
    if(TARGET ${target})
      set_target_properties(${target} PROPERTIES BUILD_RPATH "${prefix}/lib;${wheel_libs}")
      target_link_options(${target} PRIVATE "-Wl,--disable-new-dtags")
    endif()
  endforeach()
endfunction()

# mwperf_ros2_on_wheels(NAME PREFIX INSTALLER): the ros2 adapter's source (ros2.cpp
# and its discovery participant, ros2_discovery.cpp, here) as adapter NAME on the wheels in PREFIX (INSTALLER installs them). No rmw
# implementation is linked: rcl brings the one it loads (RMW_IMPLEMENTATION).
# Its unit tests are a binary of their own (mwperf_apart): the wheels' Fast DDS
# must never share a process with another's; the CPython stand-ins exported.
function(mwperf_ros2_on_wheels name prefix installer)
  if(NOT EXISTS "${prefix}/include/rcl/rcl/rcl.h")
    mwperf_adapter_missing(${name} "rcl not found under ${prefix} (${installer} installs the wheels there)")
    set(MWPERF_MISSING "${MWPERF_MISSING}" PARENT_SCOPE)
    return()
  endif()
  file(GLOB includes LIST_DIRECTORIES true "${prefix}/include/*")
  list(FILTER includes EXCLUDE REGEX "/python3")
  list(APPEND includes "${prefix}/include")
  mwperf_find_libraries(${name} "${prefix}/lib" libraries rcl rmw rcutils rosidl_runtime_c
                        std_msgs__rosidl_generator_c std_msgs__rosidl_typesupport_c)
  if(NOT libraries)
    set(MWPERF_MISSING "${MWPERF_MISSING}" PARENT_SCOPE)
    return()
  endif()
  string(MAKE_C_IDENTIFIER ${name} cname)
  mwperf_adapter(${name} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/ros2.cpp ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/ros2_discovery.cpp)
  # Before the system's (Debian's Fast DDS 2.9 headers).
  target_include_directories(mwperf_adapter_${name} SYSTEM BEFORE PRIVATE ${includes})
  target_link_libraries(mwperf_adapter_${name} PUBLIC ${libraries} ${CMAKE_DL_LIBS})
  get_filename_component(prefix_real "${prefix}" REALPATH)
  # Where the ament index of the installed rmw implementations is (next to
  # AMENT_PREFIX_PATH's); its name and factory.
  target_compile_definitions(mwperf_adapter_${name} PRIVATE MWPERF_ROS2_PREFIX="${prefix_real}"
                             MWPERF_ROS2_NAME="${name}" MWPERF_ROS2_MAKE=make_${cname}_adapter)
  mwperf_apart(${name})
  mwperf_wheel_rpath("${prefix}" mwperf_plugin_${name} mwperf_agent_tests_${name})
  foreach(target mwperf_plugin_${name} mwperf_agent_tests_${name})
    if(TARGET ${target})
      target_sources(${target} PRIVATE ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/ros2_pystub.cpp)
      set_target_properties(${target} PROPERTIES ENABLE_EXPORTS ON)
    endif()
  endforeach()
  set(MWPERF_BUILT ${MWPERF_BUILT} PARENT_SCOPE)
  set(MWPERF_APART ${MWPERF_APART} PARENT_SCOPE)
endfunction()

# mwperf_fastdds_on_wheels(NAME PREFIX INSTALLER CONFIG LIBRARY): the fastdds
# adapter's source (../fastdds/fastdds.cpp) as adapter NAME on the Fast DDS of the
# wheels in PREFIX (CONFIG: its version header, LIBRARY: fastrtps or fastdds),
# the very libraries that wheels' rmw_fastrtps_cpp runs on. Only the wheels'
# headers come before the system's (Debian's 2.9); its unit tests are a binary
# of their own (mwperf_apart). ../fastdds/fastdds_compat.h and fastcdr_compat.h
# cover the Fast DDS 2 / 3 and Fast CDR 1 / 2 differences.
function(mwperf_fastdds_on_wheels name prefix installer config library)
  if(NOT EXISTS "${prefix}/include/${config}" OR NOT EXISTS "${prefix}/include/fastcdr/config.h")
    mwperf_adapter_missing(${name} "Fast DDS headers not found under ${prefix}/include (${installer} installs the wheels there)")
    set(MWPERF_MISSING "${MWPERF_MISSING}" PARENT_SCOPE)
    return()
  endif()
  mwperf_find_libraries(${name} "${prefix}/lib" libraries ${library} fastcdr)
  if(NOT libraries)
    set(MWPERF_MISSING "${MWPERF_MISSING}" PARENT_SCOPE)
    return()
  endif()
  string(MAKE_C_IDENTIFIER ${name} cname)
  mwperf_adapter(${name} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../fastdds/fastdds.cpp)
  target_include_directories(mwperf_adapter_${name} SYSTEM BEFORE PRIVATE "${prefix}/include")
  target_link_libraries(mwperf_adapter_${name} PUBLIC ${libraries})
  # The one source, several adapters: its name and factory (make_<name>_adapter).
  target_compile_definitions(mwperf_adapter_${name} PRIVATE MWPERF_FASTDDS_NAME="${name}"
                             MWPERF_FASTDDS_MAKE=make_${cname}_adapter)
  mwperf_apart(${name})
  mwperf_wheel_rpath("${prefix}" mwperf_plugin_${name} mwperf_agent_tests_${name})
  set(MWPERF_BUILT ${MWPERF_BUILT} PARENT_SCOPE)
  set(MWPERF_APART ${MWPERF_APART} PARENT_SCOPE)
endfunction()
