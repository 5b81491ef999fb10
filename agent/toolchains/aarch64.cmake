# Cross-compiling the agent for aarch64 (the aarch64 bundle: `mwperf bundle --arch aarch64`,
# python/mwperf/bundle/cross.py) with Debian's cross toolchain (crossbuild-essential-arm64:
# aarch64-linux-gnu-gcc and its own C library in /usr/aarch64-linux-gnu) against the arm64 builds
# of Debian's middleware packages, unpacked (never installed) into MWPERF_SYSROOT:
#
#   cmake -S agent -B agent/build/aarch64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=agent/toolchains/aarch64.cmake \
#         -DMWPERF_SYSROOT=$HOME/.cache/mwperf/sysroot-aarch64-<key>
#
# MWPERF_FIND_ROOTS: more folders whose libraries are found where they are (the Connector
# wheel's prefix, with its lib/linux-arm64), not under the sysroot.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# try_compile() projects read this file again: they get these two as well.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES MWPERF_SYSROOT MWPERF_FIND_ROOTS)
if(NOT DEFINED MWPERF_FIND_ROOTS)
  set(MWPERF_FIND_ROOTS "${CMAKE_CURRENT_LIST_DIR}/../../.deps/connext")
endif()
if(NOT EXISTS "${MWPERF_SYSROOT}/usr/lib/aarch64-linux-gnu")
  message(FATAL_ERROR "MWPERF_SYSROOT=${MWPERF_SYSROOT}: no arm64 libraries there (`mwperf bundle --arch aarch64` unpacks them into ~/.cache/mwperf/sysroot-aarch64-<key>)")
endif()
set(CMAKE_FIND_ROOT_PATH "${MWPERF_SYSROOT}" /usr/aarch64-linux-gnu)
foreach(root ${MWPERF_FIND_ROOTS})
  get_filename_component(root "${root}" ABSOLUTE)  # (a path with .. in it is not seen to be inside)
  list(APPEND CMAKE_FIND_ROOT_PATH "${root}")
endforeach()
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)  # the build's tools (idlc, cargo) are the host's
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# Debian's multiarch headers (fastcdr/config.h), which a native compiler finds by itself; the
# sysroot's path, which headers' __FILE__ would put in the binaries, written as a native build's.
foreach(lang C CXX)
  set(CMAKE_${lang}_FLAGS_INIT
      "-isystem ${MWPERF_SYSROOT}/usr/include/aarch64-linux-gnu -ffile-prefix-map=${MWPERF_SYSROOT}/=/")
endforeach()
# What the middlewares' libraries need in turn is in the sysroot too (the linker follows their
# DT_NEEDED), and so are those ROS 1's catkin files name bare (-lboost_thread).
set(mwperf_lib "${MWPERF_SYSROOT}/usr/lib/aarch64-linux-gnu")
foreach(kind EXE SHARED MODULE)
  set(CMAKE_${kind}_LINKER_FLAGS_INIT "-L${mwperf_lib} -Wl,-rpath-link,${mwperf_lib}:${MWPERF_SYSROOT}/lib/aarch64-linux-gnu")
endforeach()
find_program(MWPERF_QEMU_AARCH64 qemu-aarch64-static)
if(MWPERF_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${MWPERF_QEMU_AARCH64};-L;${MWPERF_SYSROOT}")
endif()
