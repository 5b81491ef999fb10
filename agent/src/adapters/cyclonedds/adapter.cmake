# Cyclone DDS 0.10 (Debian: cyclonedds-dev); types from mwperf.idl (here) through idlc.
find_package(CycloneDDS QUIET)
if(NOT CycloneDDS_FOUND)
  mwperf_adapter_missing(cyclonedds "CycloneDDS not found (Debian: cyclonedds-dev)")
  return()
endif()
idlc_generate(TARGET mwperf_cyclone_types FILES ${CMAKE_CURRENT_LIST_DIR}/mwperf.idl WARNINGS no-implicit-extensibility)
mwperf_adapter(cyclonedds cyclonedds.cpp cyclonedds_discovery.cpp)
target_link_libraries(mwperf_adapter_cyclonedds PRIVATE mwperf_cyclone_types PUBLIC CycloneDDS::ddsc)
