# Fast DDS 2.9 (Debian: libfastrtps-dev). The type support is the adapter's own
# (../cyclonedds/mwperf.idl's layout), so no code generator is needed.
find_package(fastrtps QUIET)
find_package(fastcdr QUIET)
if(NOT fastrtps_FOUND OR NOT fastcdr_FOUND)
  mwperf_adapter_missing(fastdds "Fast DDS not found (Debian: libfastrtps-dev)")
  return()
endif()
mwperf_adapter(fastdds fastdds.cpp fastdds_discovery.cpp)
target_compile_definitions(mwperf_adapter_fastdds PRIVATE MWPERF_FASTDDS_DISCOVERY)
target_link_libraries(mwperf_adapter_fastdds PUBLIC fastrtps fastcdr)
