# oneDNN (Debian: libdnnl-dev, oneDNN 2.6 with OpenMP threads) for the Conv kernel.
#   ONEPOOL_DNNL=OFF  (default) Conv runs on OnePool's own GEMM (runtime/cpu/kernels/sgemm_packed.h).
#   ONEPOOL_DNNL=AUTO use oneDNN when it is installed, say so when it is not.
#   ONEPOOL_DNNL=ON   require oneDNN.
# Off by default because oneDNN 2.6 allocates inside every primitive execution (its argument
# map and scratchpad grantor: 8 small heap allocations per call), which breaks the promise that
# Session::run allocates nothing (tests/runtime/zero_alloc_test.cc fails with it on).
# Defines onepool_link_dnnl(target): links oneDNN PRIVATE and sets ONEPOOL_HAVE_DNNL=1.
set(ONEPOOL_DNNL "OFF" CACHE STRING "Run Conv on oneDNN: OFF, AUTO or ON")
set_property(CACHE ONEPOOL_DNNL PROPERTY STRINGS OFF AUTO ON)

# Found by header and library rather than find_package(dnnl): Debian's dnnl-config.cmake
# requires the OpenCL development files, which only its GPU runtime needs.
set(ONEPOOL_HAVE_DNNL OFF)
if(NOT ONEPOOL_DNNL STREQUAL "OFF")
  find_path(ONEPOOL_DNNL_INCLUDE dnnl.hpp)
  find_library(ONEPOOL_DNNL_LIBRARY NAMES dnnl)
  find_package(OpenMP QUIET COMPONENTS CXX)
  if(ONEPOOL_DNNL_INCLUDE AND ONEPOOL_DNNL_LIBRARY AND OpenMP_CXX_FOUND)
    set(ONEPOOL_HAVE_DNNL ON)
    add_library(onepool_dnnl INTERFACE)
    target_include_directories(onepool_dnnl INTERFACE ${ONEPOOL_DNNL_INCLUDE})
    # OpenMP's library only (omp_set_num_threads): no -fopenmp on OnePool's own sources.
    target_link_libraries(onepool_dnnl INTERFACE ${ONEPOOL_DNNL_LIBRARY} ${OpenMP_CXX_LIBRARIES})
    message(STATUS "OnePool: oneDNN for Conv from ${ONEPOOL_DNNL_LIBRARY} "
                   "(ONEPOOL_DNNL=${ONEPOOL_DNNL})")
  elseif(ONEPOOL_DNNL STREQUAL "ON")
    message(FATAL_ERROR "ONEPOOL_DNNL=ON but oneDNN (dnnl.hpp '${ONEPOOL_DNNL_INCLUDE}', libdnnl "
                        "'${ONEPOOL_DNNL_LIBRARY}') or OpenMP was not found: install libdnnl-dev")
  else()
    message(STATUS "OnePool: oneDNN not found (install libdnnl-dev); Conv runs on OnePool's GEMM")
  endif()
endif()

function(onepool_link_dnnl target)
  if(ONEPOOL_HAVE_DNNL)
    target_link_libraries(${target} PRIVATE onepool_dnnl)
    target_compile_definitions(${target} PRIVATE ONEPOOL_HAVE_DNNL=1)
  endif()
endfunction()
