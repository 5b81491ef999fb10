# iceoryx 2.0 (Debian: libiceoryx-posh-dev; RouDi is iox-roudi from the iceoryx package).
# What its daemon runs with, next to the agent (the controller starts RouDi with it).
configure_file(${CMAKE_CURRENT_LIST_DIR}/roudi.toml ${CMAKE_CURRENT_BINARY_DIR}/roudi.toml COPYONLY)
find_package(iceoryx_posh CONFIG QUIET)
if(NOT iceoryx_posh_FOUND)
  mwperf_adapter_missing(iceoryx "iceoryx_posh not found (Debian: libiceoryx-posh-dev)")
  return()
endif()
mwperf_adapter(iceoryx iceoryx.cpp iceoryx_discovery.cpp)
target_link_libraries(mwperf_adapter_iceoryx PUBLIC iceoryx_posh::iceoryx_posh)
