# iceoryx 2.0 (Debian: libiceoryx-posh-dev; RouDi is iox-roudi from the iceoryx package).
find_package(iceoryx_posh CONFIG QUIET)
if(NOT iceoryx_posh_FOUND)
  mwperf_adapter_missing(iceoryx "iceoryx_posh not found (Debian: libiceoryx-posh-dev)")
  return()
endif()
mwperf_adapter(iceoryx src/adapters/iceoryx.cpp)
target_link_libraries(mwperf_adapter_iceoryx PUBLIC iceoryx_posh::iceoryx_posh)
