# Third-party dependencies (see docs/DEPENDENCIES.md for why each one).
find_package(Threads REQUIRED)

# SQLite, linked statically and with hidden symbols so the tracer's copy never
# clashes with an SQLite the traced program loads (Python's sqlite3 module).
find_path(SQLITE3_INCLUDE_DIR sqlite3.h REQUIRED)
find_library(SQLITE3_STATIC_LIB NAMES libsqlite3.a REQUIRED)
add_library(sqlite3_static STATIC IMPORTED GLOBAL)
set_target_properties(sqlite3_static PROPERTIES
  IMPORTED_LOCATION ${SQLITE3_STATIC_LIB}
  INTERFACE_INCLUDE_DIRECTORIES ${SQLITE3_INCLUDE_DIR}
  INTERFACE_LINK_LIBRARIES "m;dl;Threads::Threads")

# zlib: gzip-compressed torch.profiler traces are decoded on the fly.
find_package(ZLIB REQUIRED)

# CUDA toolkit headers + CUPTI (the tracer and bench/roofline). Only headers
# and libcupti are needed at build time; libcuda is the driver's. Found through
# CMake's FindCUDAToolkit (CUDA::cupti), so the same build works on x86_64
# and on aarch64 / Grace Hopper (targets/sbsa-linux in the toolkit):
# no architecture-specific path appears here (tests/check_portable_paths.py).
set(STEPSCOPE_CUDA_ROOT "/usr/local/cuda" CACHE PATH "CUDA toolkit root")
if(NOT DEFINED CUDAToolkit_ROOT AND EXISTS ${STEPSCOPE_CUDA_ROOT})
  set(CUDAToolkit_ROOT ${STEPSCOPE_CUDA_ROOT})
endif()
find_package(CUDAToolkit QUIET)
if(TARGET CUDA::cupti)
  get_target_property(CUPTI_LIB CUDA::cupti IMPORTED_LOCATION)
  find_path(CUPTI_INCLUDE_DIR cupti.h
    HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_TARGET_DIR}/extras/CUPTI/include
          ${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI/include)
else()
  find_path(CUPTI_INCLUDE_DIR cupti.h
    HINTS ${STEPSCOPE_CUDA_ROOT}/include ${STEPSCOPE_CUDA_ROOT}/extras/CUPTI/include)
  find_library(CUPTI_LIB cupti
    HINTS ${STEPSCOPE_CUDA_ROOT}/lib64 ${STEPSCOPE_CUDA_ROOT}/extras/CUPTI/lib64)
endif()
if(CUPTI_INCLUDE_DIR AND CUPTI_LIB)
  set(STEPSCOPE_HAVE_CUPTI ON)
  get_filename_component(CUPTI_LIB_DIR ${CUPTI_LIB} DIRECTORY)
  # Run path of the injected library: where libcupti was found, the directory
  # it resolves to (the toolkit's targets/<arch>/lib) and the toolkit's lib64.
  get_filename_component(_cupti_real ${CUPTI_LIB} REALPATH)
  get_filename_component(_cupti_real_dir ${_cupti_real} DIRECTORY)
  set(CUPTI_RPATH "${CUPTI_LIB_DIR}:${_cupti_real_dir}:${STEPSCOPE_CUDA_ROOT}/lib64")
  message(STATUS "CUPTI: ${CUPTI_LIB} (${CMAKE_SYSTEM_PROCESSOR})")
else()
  set(STEPSCOPE_HAVE_CUPTI OFF)
  message(WARNING "CUPTI not found under ${STEPSCOPE_CUDA_ROOT}: the injected tracer is not built")
endif()

if(STEPSCOPE_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
find_package(Python3 COMPONENTS Interpreter REQUIRED)

# Protocol Buffers (lite runtime + protoc): the Perfetto export encodes our own
# minimal perfetto_trace.proto (src/export/).
find_package(Protobuf REQUIRED)

# libunwind (remote mode), linked statically with its liblzma: the collector
# unwinds the native stacks the kernel samples from the traced process's
# threads (src/collector/native_stack.h) with the call-frame information of
# the mapped ELF files, as perf does. Static, so that the build carried to the
# GPU machines needs no libunwind there. Only the remote-unwinding archive
# (libunwind-generic.a): the local one (libunwind.a) also defines _Unwind_*
# and would take over C++ exception unwinding from libgcc.
find_path(LIBUNWIND_INCLUDE_DIR libunwind.h REQUIRED)
find_library(LIBUNWIND_GENERIC_STATIC NAMES libunwind-generic.a REQUIRED)
find_library(LZMA_STATIC_LIB NAMES liblzma.a REQUIRED)
add_library(libunwind_static INTERFACE IMPORTED GLOBAL)
set_target_properties(libunwind_static PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES ${LIBUNWIND_INCLUDE_DIR}
  INTERFACE_LINK_LIBRARIES "${LIBUNWIND_GENERIC_STATIC};${LZMA_STATIC_LIB}")
