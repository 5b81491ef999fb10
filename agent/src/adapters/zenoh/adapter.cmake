# zenoh 1.x through the Rust shim (../shim): zenoh.cpp over the C ABI, the
# backend in rust/ (the `zenoh` crate; zenoh-c is not on crates.io), built with
# the shim's one cargo build (features zenoh, zenoh-shm).
include(${CMAKE_CURRENT_LIST_DIR}/../shim/shim.cmake)
if(MWPERF_ADAPTER_ZENOH)  # still on: the Rust toolchain builds its crate
  mwperf_adapter(zenoh zenoh.cpp zenoh_discovery.cpp)
  target_link_libraries(mwperf_adapter_zenoh PUBLIC mwperf_shim)
endif()
