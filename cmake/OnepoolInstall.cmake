# Install and export: public headers, the static libraries, a generated version header, a CMake
# package (find_package(onepool CONFIG) -> onepool::onepool, plus onepool::cuda when built) and
# a pkg-config file. Included at the end of the top-level CMakeLists.txt.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(ONEPOOL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/onepool)

# Step 1. Version header, generated into the build tree and found through onepool_planner.
configure_file(${PROJECT_SOURCE_DIR}/cmake/version.h.in
               ${PROJECT_BINARY_DIR}/include/onepool/version.h @ONLY)
target_include_directories(onepool_planner PUBLIC
  $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

# Step 2. onepool::onepool: one interface target that brings the static libraries and, through
# their link interfaces, ONNX, protobuf, OpenBLAS (onepool_blas, exported as is), Threads and
# nlohmann_json.
add_library(onepool INTERFACE)
target_link_libraries(onepool INTERFACE onepool_runtime onepool_planner)
add_library(onepool::onepool ALIAS onepool)
set(ONEPOOL_EXPORTED_TARGETS onepool onepool_runtime onepool_planner onepool_blas)
if(TARGET onepool_dnnl)
  list(APPEND ONEPOOL_EXPORTED_TARGETS onepool_dnnl)  # oneDNN, exported as is like OpenBLAS
endif()
set(ONEPOOL_EXPORT_CUDA OFF)
if(ONEPOOL_HAVE_CUDA AND TARGET onepool_cuda)
  add_library(onepool_cuda_interface INTERFACE)
  target_link_libraries(onepool_cuda_interface INTERFACE onepool_cuda)
  set_target_properties(onepool_cuda_interface PROPERTIES EXPORT_NAME cuda)
  list(APPEND ONEPOOL_EXPORTED_TARGETS onepool_cuda onepool_cuda_interface)
  set(ONEPOOL_EXPORT_CUDA ON)
endif()

# Step 3. Install rules.
install(TARGETS ${ONEPOOL_EXPORTED_TARGETS} EXPORT onepoolTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/onepool DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_BINARY_DIR}/include/onepool/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/onepool)
install(EXPORT onepoolTargets NAMESPACE onepool:: DESTINATION ${ONEPOOL_CMAKE_DIR})
if(TARGET onepool_cli)
  install(TARGETS onepool_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} OPTIONAL)
endif()

# Step 4. Package config + version file.
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/onepoolConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/onepoolConfig.cmake
                              INSTALL_DESTINATION ${ONEPOOL_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/onepoolConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/onepoolConfig.cmake
              ${PROJECT_BINARY_DIR}/onepoolConfigVersion.cmake
        DESTINATION ${ONEPOOL_CMAKE_DIR})

# Step 5. pkg-config (prefix relative to the .pc file, so the install tree can move).
set(ONEPOOL_PC_BLAS ${ONEPOOL_OPENBLAS_LIBRARY})
file(RELATIVE_PATH ONEPOOL_PC_TO_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" ONEPOOL_PC_TO_PREFIX "${ONEPOOL_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/onepool.pc.in ${PROJECT_BINARY_DIR}/onepool.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/onepool.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
