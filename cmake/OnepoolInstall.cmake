# Install and export: public headers, libonepool.so (or the static libraries), a generated version
# header, a CMake package (find_package(onepool CONFIG) -> onepool::onepool) and a pkg-config
# file. Included at the end of the top-level CMakeLists.txt.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(ONEPOOL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/onepool)

# Step 1. Version header, generated into the build tree and found through onepool_core.
configure_file(${PROJECT_SOURCE_DIR}/cmake/version.h.in
               ${PROJECT_BINARY_DIR}/include/onepool/version.h @ONLY)
target_include_directories(onepool_core PUBLIC
  $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

# Step 2. onepool::onepool. By default (ONEPOOL_SHARED) it is libonepool.so: the static libraries
# linked whole into one shared library that exports the public API only (cmake/onepool_exports.map)
# and keeps ONNX, protobuf, OpenBLAS and CUDA as its own private dependencies, so a consumer needs
# the headers, the C++20 flag and -lonepool. With ONEPOOL_SHARED=OFF it is an interface target over
# the static libraries, which bring their dependencies through their link interfaces.
set(ONEPOOL_STATIC_PARTS onepool_runtime ${ONEPOOL_PLANNER_LAYERS} onepool_placement)
if(ONEPOOL_SHARED)
  file(WRITE ${PROJECT_BINARY_DIR}/onepool_shared.cc
       "// libonepool.so: its static parts linked whole (cmake/OnepoolInstall.cmake).\n")
  add_library(onepool_package SHARED ${PROJECT_BINARY_DIR}/onepool_shared.cc)
  # Every object of the static parts (whole archives, ahead of everything else on the link line),
  # then the same targets again for their own dependencies. (CMake's WHOLE_ARCHIVE link feature
  # refuses a library that also arrives through another's link interface, as the planner does.)
  set(ONEPOOL_WHOLE_ARCHIVES "")
  foreach(part ${ONEPOOL_STATIC_PARTS})
    list(APPEND ONEPOOL_WHOLE_ARCHIVES "$<TARGET_FILE:${part}>")
  endforeach()
  target_link_options(onepool_package PRIVATE "LINKER:--whole-archive" ${ONEPOOL_WHOLE_ARCHIVES}
                      "LINKER:--no-whole-archive")
  target_link_libraries(onepool_package PRIVATE ${ONEPOOL_STATIC_PARTS})
  target_link_options(onepool_package PRIVATE
    "LINKER:--version-script=${PROJECT_SOURCE_DIR}/cmake/onepool_exports.map"
    "LINKER:--no-undefined")
  set_target_properties(onepool_package PROPERTIES
    OUTPUT_NAME onepool EXPORT_NAME onepool
    VERSION ${PROJECT_VERSION}
    SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
    LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/onepool_exports.map)
  target_include_directories(onepool_package INTERFACE
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  onepool_target_options(onepool_package)
  set(ONEPOOL_EXPORTED_TARGETS onepool_package)
  set(ONEPOOL_PACKAGE_IS_STATIC OFF)
else()
  add_library(onepool_package INTERFACE)
  target_link_libraries(onepool_package INTERFACE ${ONEPOOL_STATIC_PARTS})
  set_target_properties(onepool_package PROPERTIES EXPORT_NAME onepool)
  set(ONEPOOL_EXPORTED_TARGETS onepool_package onepool_runtime ${ONEPOOL_PLANNER_LAYERS}
      onepool_placement onepool_blas)
  if(TARGET onepool_dnnl)
    list(APPEND ONEPOOL_EXPORTED_TARGETS onepool_dnnl)  # oneDNN, exported as is like OpenBLAS
  endif()
  set(ONEPOOL_PACKAGE_IS_STATIC ON)
endif()
# The public headers use C++20 (std::span): every consumer compiles as C++20 or later.
target_compile_features(onepool_package INTERFACE cxx_std_20)
add_library(onepool::onepool ALIAS onepool_package)
set(ONEPOOL_EXPORT_CUDA OFF)  # CUDA lives in libonepool_cuda.so, loaded by the runtime

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
if(TARGET onepool_cuda_module)
  install(TARGETS onepool_cuda_module LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
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

# Step 5. pkg-config (prefix relative to the .pc file, so the install tree can move). The shared
# package needs only -lonepool; the static one lists the libraries behind it.
if(ONEPOOL_SHARED)
  set(ONEPOOL_PC_REQUIRES_LINE "")
  set(ONEPOOL_PC_LIBS "-lonepool")
else()
  set(ONEPOOL_PC_REQUIRES_LINE "Requires: protobuf")
  set(ONEPOOL_PC_LIBS "-lonepool_runtime -lonepool_render -lonepool_analysis -lonepool_optimize -lonepool_import -lonepool_core -lonepool_placement -lonnx -lonnx_proto ${ONEPOOL_OPENBLAS_LIBRARY} -pthread")
endif()
file(RELATIVE_PATH ONEPOOL_PC_TO_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" ONEPOOL_PC_TO_PREFIX "${ONEPOOL_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/onepool.pc.in ${PROJECT_BINARY_DIR}/onepool.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/onepool.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
