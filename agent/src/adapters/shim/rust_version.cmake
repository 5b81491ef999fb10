# The oldest Rust toolchain each middleware crate of the Rust shim builds with (their
# rust-version): iceoryx2 0.10 needs 1.89, zenoh 1.10.2 1.75. Debian 12's
# cargo/rustc (1.63) builds neither.
set(MWPERF_RUST_MIN_zenoh 1.75)
set(MWPERF_RUST_MIN_iceoryx2 1.89)

# mwperf_rust_check(RUSTC NAME OUT): OUT is "" when RUSTC can build the crate
# of adapter NAME, else the reason and what to install.
function(mwperf_rust_check rustc name out)
  set(need ${MWPERF_RUST_MIN_${name}})
  execute_process(COMMAND "${rustc}" --version OUTPUT_VARIABLE text RESULT_VARIABLE rc ERROR_QUIET)
  string(REGEX MATCH "^rustc ([0-9]+\\.[0-9]+(\\.[0-9]+)?)" found "${text}")
  if(NOT rc EQUAL 0 OR NOT found)
    set(${out} "cannot tell the Rust version (${rustc} --version failed); ${name} needs rustc >= ${need}: install rustup and `rustup toolchain install stable`" PARENT_SCOPE)
  elseif(CMAKE_MATCH_1 VERSION_LESS need)
    set(${out} "rustc ${CMAKE_MATCH_1} is too old: ${name} needs rustc >= ${need} (Debian's cargo is 1.63); install rustup and `rustup toolchain install stable`, then configure again" PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()
