# cyclonedds11: the cyclonedds adapter's own source (../cyclonedds/cyclonedds.cpp,
# its type ../cyclonedds/mwperf.idl, the same configuration) built against
# Cyclone DDS 11.0.1 from the cyclors crate's source (install.sh, here:
# .deps/cyclonedds11, headers, libddsc, idlc and the DDS Security plugins).
# Not through find_package: its CMake config would define CycloneDDS::ddsc
# again beside Debian's 0.10 (the cyclonedds adapter's). Cyclone 11 must never
# share a process with 0.10 (the same symbols): a plugin and a test binary of
# its own. Where install.sh could not build it, its reason is the one given.
set(MWPERF_CYCLONE11_PREFIX "${CMAKE_CURRENT_SOURCE_DIR}/../.deps/cyclonedds11" CACHE PATH
    "Cyclone DDS 11 install tree (agent/src/adapters/cyclonedds11/install.sh)")
set(cyclone11_refused "${CMAKE_CURRENT_SOURCE_DIR}/../.deps/cyclonedds11.missing")
set(cyclone11_idlc "${MWPERF_CYCLONE11_PREFIX}/bin/idlc")
if(EXISTS "${cyclone11_refused}")
  file(READ "${cyclone11_refused}" why)
  string(STRIP "${why}" why)
  mwperf_adapter_missing(cyclonedds11 "${why}")
  return()
endif()
if(NOT EXISTS "${MWPERF_CYCLONE11_PREFIX}/include/dds/dds.h" OR NOT EXISTS "${cyclone11_idlc}")
  mwperf_adapter_missing(cyclonedds11 "Cyclone DDS 11 not found in ${MWPERF_CYCLONE11_PREFIX} (agent/src/adapters/cyclonedds11/install.sh builds it there)")
  return()
endif()
mwperf_find_libraries(cyclonedds11 "${MWPERF_CYCLONE11_PREFIX}/lib" cyclone11_libraries ddsc)
if(NOT cyclone11_libraries)
  return()
endif()
# The type through Cyclone 11's own idlc (its descriptors are not 0.10's).
set(cyclone11_types "${CMAKE_CURRENT_BINARY_DIR}/cyclonedds11-types")
add_custom_command(OUTPUT "${cyclone11_types}/mwperf.c" "${cyclone11_types}/mwperf.h"
  COMMAND ${CMAKE_COMMAND} -E make_directory "${cyclone11_types}"
  COMMAND ${CMAKE_COMMAND} -E env "LD_LIBRARY_PATH=${MWPERF_CYCLONE11_PREFIX}/lib" "${cyclone11_idlc}"
          -Wno-implicit-extensibility -o "${cyclone11_types}" "${CMAKE_CURRENT_LIST_DIR}/../cyclonedds/mwperf.idl"
  DEPENDS "${CMAKE_CURRENT_LIST_DIR}/../cyclonedds/mwperf.idl" "${cyclone11_idlc}"
  COMMENT "idlc (Cyclone DDS 11) mwperf.idl")
mwperf_adapter(cyclonedds11 ../cyclonedds/cyclonedds.cpp ../cyclonedds/cyclonedds_discovery.cpp
               "${cyclone11_types}/mwperf.c")
target_include_directories(mwperf_adapter_cyclonedds11 SYSTEM BEFORE PRIVATE "${cyclone11_types}"
                           "${MWPERF_CYCLONE11_PREFIX}/include")
target_link_libraries(mwperf_adapter_cyclonedds11 PUBLIC ${cyclone11_libraries})
target_compile_definitions(mwperf_adapter_cyclonedds11 PRIVATE MWPERF_CYCLONEDDS_NAME="cyclonedds11"
                           MWPERF_CYCLONEDDS_MAKE=make_cyclonedds11_adapter)
mwperf_apart(cyclonedds11)
foreach(target mwperf_plugin_cyclonedds11 mwperf_agent_tests_cyclonedds11)
  if(TARGET ${target})
    set_target_properties(${target} PROPERTIES BUILD_RPATH "${MWPERF_CYCLONE11_PREFIX}/lib")
  endif()
endforeach()
