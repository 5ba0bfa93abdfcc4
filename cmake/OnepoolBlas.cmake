# onepool_blas: an interface target for CBLAS (OpenBLAS from Debian).
add_library(onepool_blas INTERFACE)
find_path(ONEPOOL_CBLAS_INCLUDE cblas.h
          PATHS /usr/include/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-pthread
                /usr/include/openblas /usr/include NO_DEFAULT_PATH)
find_library(ONEPOOL_OPENBLAS_LIBRARY NAMES openblas
             PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-pthread)
if(NOT ONEPOOL_CBLAS_INCLUDE OR NOT ONEPOOL_OPENBLAS_LIBRARY)
  message(FATAL_ERROR "OpenBLAS not found: install libopenblas-dev (found cblas.h at "
                      "'${ONEPOOL_CBLAS_INCLUDE}', libopenblas at '${ONEPOOL_OPENBLAS_LIBRARY}')")
endif()
target_include_directories(onepool_blas INTERFACE ${ONEPOOL_CBLAS_INCLUDE})
target_link_libraries(onepool_blas INTERFACE ${ONEPOOL_OPENBLAS_LIBRARY})
message(STATUS "OnePool: CBLAS from ${ONEPOOL_OPENBLAS_LIBRARY}")
