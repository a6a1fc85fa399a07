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
# and libcupti are needed at build time; libcuda is the driver's.
set(STEPSCOPE_CUDA_ROOT "/usr/local/cuda" CACHE PATH "CUDA toolkit root")
find_path(CUPTI_INCLUDE_DIR cupti.h
  HINTS ${STEPSCOPE_CUDA_ROOT}/targets/x86_64-linux/include ${STEPSCOPE_CUDA_ROOT}/extras/CUPTI/include
        ${STEPSCOPE_CUDA_ROOT}/include)
find_library(CUPTI_LIB cupti
  HINTS ${STEPSCOPE_CUDA_ROOT}/targets/x86_64-linux/lib ${STEPSCOPE_CUDA_ROOT}/extras/CUPTI/lib64
        ${STEPSCOPE_CUDA_ROOT}/lib64)
if(CUPTI_INCLUDE_DIR AND CUPTI_LIB)
  set(STEPSCOPE_HAVE_CUPTI ON)
  get_filename_component(CUPTI_LIB_DIR ${CUPTI_LIB} DIRECTORY)
  message(STATUS "CUPTI: ${CUPTI_LIB}")
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
