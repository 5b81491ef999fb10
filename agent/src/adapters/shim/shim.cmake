# zenoh and iceoryx2 through the Rust shim (here: its C ABI, src/lib.rs and
# include/mwperf_shim.h, and what its crates share, api/; each middleware's
# crate in its adapter's folder, ../<name>/rust), one Rust static library
# (two Rust static libraries in one binary would clash on Rust's own runtime),
# built by one cargo invocation over the workspace agent/Cargo.toml with the
# features of the adapters switched on. Included by each of their adapter.cmake,
# run once: their adapter.cmake then adds the adapter if it is still switched on.
# CARGO_TARGET_DIR lives outside the build folder (~/.cache/mwperf/cargo-target
# by default), so that a new build, a clean clone or `make clean` does not
# rebuild the crates (a cold build of zenoh takes minutes).
# The toolchain must be new enough for the crates (rust_version.cmake): a rustc
# too old for one crate leaves out that adapter only, with what to install.
include_guard(GLOBAL)
include(${CMAKE_CURRENT_LIST_DIR}/rust_version.cmake)
find_program(MWPERF_CARGO cargo HINTS "$ENV{HOME}/.cargo/bin")
if(MWPERF_CARGO)
  get_filename_component(cargo_dir "${MWPERF_CARGO}" DIRECTORY)
  find_program(MWPERF_RUSTC rustc HINTS "${cargo_dir}" NO_DEFAULT_PATH)
  find_program(MWPERF_RUSTC rustc)
endif()
foreach(name zenoh iceoryx2)
  string(TOUPPER ${name} upper)
  if(NOT MWPERF_ADAPTER_${upper})
    continue()
  endif()
  if(NOT MWPERF_CARGO OR NOT MWPERF_RUSTC)
    set(why "cargo and rustc not found: install rustup and `rustup toolchain install stable` (${name} needs rustc >= ${MWPERF_RUST_MIN_${name}}; Debian's cargo, 1.63, is too old)")
  else()
    mwperf_rust_check("${MWPERF_RUSTC}" ${name} why)
  endif()
  if(why)
    mwperf_adapter_missing(${name} "${why}")
    set(MWPERF_ADAPTER_${upper} OFF)
  endif()
endforeach()
if(NOT MWPERF_ADAPTER_ZENOH AND NOT MWPERF_ADAPTER_ICEORYX2)
  return()
endif()
set(MWPERF_CARGO_TARGET_DIR "$ENV{HOME}/.cache/mwperf/cargo-target" CACHE PATH "cargo's target folder for the shim")
set(shim_dir "${CMAKE_CURRENT_LIST_DIR}")
set(shim_features "")
if(MWPERF_ADAPTER_ZENOH)
  list(APPEND shim_features zenoh zenoh-shm)
endif()
if(MWPERF_ADAPTER_ICEORYX2)
  list(APPEND shim_features iceoryx2)
endif()
string(REPLACE ";" "," shim_features "${shim_features}")
# A change of features rebuilds the library (the file below changes, the command depends on it).
file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/shim_features.txt.in" "${shim_features}\n")
configure_file("${CMAKE_CURRENT_BINARY_DIR}/shim_features.txt.in" "${CMAKE_CURRENT_BINARY_DIR}/shim_features.txt" COPYONLY)
# The library cargo makes in the shared target folder is copied into this build folder, and only when its bytes
# changed (a BYPRODUCT: Ninja re-checks its time): another checkout's cargo build there (another branch's shim)
# never makes this one's plugins relink, nor a `cmake --build` with nothing changed (the bundle's does) rewrite a
# plugin that a running agent or ldd is reading.
set(shim_built "${MWPERF_CARGO_TARGET_DIR}/release/libmwperf_shim.a")
set(shim_lib "${CMAKE_CURRENT_BINARY_DIR}/libmwperf_shim.a")
set(shim_stamp "${CMAKE_CURRENT_BINARY_DIR}/shim_cargo.stamp")
file(GLOB_RECURSE shim_sources CONFIGURE_DEPENDS "${shim_dir}/*.rs" "${shim_dir}/*Cargo.toml"
     "${CMAKE_CURRENT_SOURCE_DIR}/src/adapters/*/rust/*.rs" "${CMAKE_CURRENT_SOURCE_DIR}/src/adapters/*/rust/Cargo.toml")
add_custom_command(OUTPUT "${shim_stamp}"
  BYPRODUCTS "${shim_lib}"
  COMMAND ${CMAKE_COMMAND} -E env "CARGO_TARGET_DIR=${MWPERF_CARGO_TARGET_DIR}"
          ${MWPERF_CARGO} build --release --locked --quiet --manifest-path "${shim_dir}/Cargo.toml"
          --features "${shim_features}"
  COMMAND ${CMAKE_COMMAND} -E copy_if_different "${shim_built}" "${shim_lib}"
  COMMAND ${CMAKE_COMMAND} -E touch "${shim_stamp}"
  DEPENDS ${shim_sources} "${CMAKE_CURRENT_SOURCE_DIR}/Cargo.toml" "${CMAKE_CURRENT_SOURCE_DIR}/Cargo.lock"
          "${CMAKE_CURRENT_BINARY_DIR}/shim_features.txt"
  COMMENT "cargo build src/adapters/shim (${shim_features})"
  USES_TERMINAL)
add_custom_target(mwperf_shim_cargo DEPENDS "${shim_stamp}")
add_library(mwperf_shim STATIC IMPORTED GLOBAL)
set_target_properties(mwperf_shim PROPERTIES IMPORTED_LOCATION "${shim_lib}")
target_include_directories(mwperf_shim INTERFACE "${shim_dir}/include")
target_link_libraries(mwperf_shim INTERFACE Threads::Threads ${CMAKE_DL_LIBS} m rt util gcc_s)
add_dependencies(mwperf_shim mwperf_shim_cargo)
