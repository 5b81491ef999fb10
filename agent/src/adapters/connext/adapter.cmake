# RTI Connext DDS 6.1.2 through RTI Connector for Python (PyPI
# rticonnextdds-connector 1.2.4) in a prefix the project owns
# (install.sh, here). The wheel ships librtiddsconnector.so and the
# Connext core (libnddsc, libnddscore) for linux-x64 and linux-arm64, and no
# headers: the adapter declares the few functions it calls (connext_c.h).
# connext_leftovers.cpp: a registry entry's clean (registry.h), needing no middleware library.
mwperf_agent_sources(connext_leftovers.cpp)
set(MWPERF_CONNEXT_PREFIX "${CMAKE_CURRENT_SOURCE_DIR}/../.deps/connext" CACHE PATH
    "prefix holding rticonnextdds-connector (a venv)")
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64)$")
  set(connext_platform linux-x64)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
  set(connext_platform linux-arm64)  # the wheel ships both (a cross build for the aarch64 bundle)
else()
  mwperf_adapter_missing(connext "the Connector's libraries are used for linux-x64 and linux-arm64 only (this is ${CMAKE_SYSTEM_PROCESSOR})")
  return()
endif()
file(GLOB connext_dirs LIST_DIRECTORIES true
     "${MWPERF_CONNEXT_PREFIX}/lib/python3*/site-packages/rticonnextdds-connector/lib/${connext_platform}")
file(GLOB connext_dist LIST_DIRECTORIES true
     "${MWPERF_CONNEXT_PREFIX}/lib/python3*/site-packages/rticonnextdds_connector-*.dist-info")
if(NOT connext_dirs OR NOT connext_dist)
  mwperf_adapter_missing(connext "rticonnextdds-connector not found under ${MWPERF_CONNEXT_PREFIX} (agent/src/adapters/connext/install.sh installs it there)")
  return()
endif()
list(GET connext_dirs 0 connext_dir)
list(GET connext_dist 0 connext_dist)
string(REGEX REPLACE ".*rticonnextdds_connector-(.*)\\.dist-info$" "\\1" connext_package_version "${connext_dist}")
mwperf_find_libraries(connext "${connext_dir}" connext_libraries rtiddsconnector nddsc nddscore)
if(NOT connext_libraries)
  return()
endif()
mwperf_adapter(connext connext.cpp connext_xml.cpp)  # connext_leftovers.cpp: in the agent (above)
# The libraries by full path: CMake puts their folder on the executables' build RPATH.
target_link_libraries(mwperf_adapter_connext PUBLIC ${connext_libraries})
target_compile_definitions(mwperf_adapter_connext PRIVATE
  MWPERF_CONNEXT_PACKAGE="rticonnextdds-connector ${connext_package_version}"
  MWPERF_CONNEXT_METADATA="${connext_dist}/METADATA")
