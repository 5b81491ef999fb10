# iceoryx2 0.10 through the Rust shim (../shim): iceoryx2.cpp over the C ABI,
# the backend in rust/ (the `iceoryx2` crate), built with the shim's one cargo
# build (feature iceoryx2).
include(${CMAKE_CURRENT_LIST_DIR}/../shim/shim.cmake)
if(MWPERF_ADAPTER_ICEORYX2)  # still on: the Rust toolchain builds its crate
  mwperf_adapter(iceoryx2 iceoryx2.cpp)
  target_link_libraries(mwperf_adapter_iceoryx2 PUBLIC mwperf_shim)
endif()
