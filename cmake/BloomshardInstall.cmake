# cmake --install: headers, the four layer libraries (static, PIC), the
# binary, a CMake package (bloomshardConfig.cmake + version file exporting
# bloomshard::core/comm/io/app) and a pkg-config file. docs/library.md says
# how to consume them and what the version rule is.
include(CMakePackageConfigHelpers)

set(BLOOMSHARD_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/bloomshard)

# The helper interface targets travel with the layers: a static library's
# private links still reach its consumers' link line.
set_target_properties(bloomshard_hdf5 PROPERTIES EXPORT_NAME hdf5)
set_target_properties(bloomshard_warnings PROPERTIES EXPORT_NAME warnings)
set_target_properties(bloomshard_sanitizers PROPERTIES EXPORT_NAME sanitizers)

install(TARGETS bloomshard_core bloomshard_store bloomshard_comm bloomshard_io bloomshard_app
                bloomshard_hdf5 bloomshard_warnings bloomshard_sanitizers
  EXPORT bloomshardTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/bloomshard
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT bloomshardTargets NAMESPACE bloomshard:: DESTINATION ${BLOOMSHARD_CMAKE_DIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/bloomshardConfig.cmake.in
  ${PROJECT_BINARY_DIR}/bloomshardConfig.cmake INSTALL_DESTINATION ${BLOOMSHARD_CMAKE_DIR})
# 0.x: a minor release may change the API, so only the same minor matches.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/bloomshardConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/bloomshardConfig.cmake
              ${PROJECT_BINARY_DIR}/bloomshardConfigVersion.cmake
  DESTINATION ${BLOOMSHARD_CMAKE_DIR})

file(RELATIVE_PATH BLOOMSHARD_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" BLOOMSHARD_PC_TO_PREFIX "${BLOOMSHARD_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/bloomshard.pc.in ${PROJECT_BINARY_DIR}/bloomshard.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/bloomshard.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
