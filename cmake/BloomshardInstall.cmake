# cmake --install: the public headers (include/bloomshard/: the filter, key
# schemes and hashing, membership queries, and the store reader once it is
# there), the libraries they need (core; store when it exists), the program,
# a CMake package (bloomshardConfig.cmake + version file exporting
# bloomshard::core, bloomshard::store) and a pkg-config file. The comm, io and
# app layers and the tools are the program's internals: neither their
# headers (they live beside their sources in src/) nor their libraries are
# installed. docs/library.md says how to consume what is and what the
# version rule is.
include(CMakePackageConfigHelpers)

set(BLOOMSHARD_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/bloomshard)

# The helper interface targets travel with the libraries: a static
# library's private links still reach its consumers' link line.
set_target_properties(bloomshard_warnings PROPERTIES EXPORT_NAME warnings)
set_target_properties(bloomshard_sanitizers PROPERTIES EXPORT_NAME sanitizers)

set(bloomshard_installed_libraries bloomshard_core)
if(TARGET bloomshard_store)  # the MPI-free saved-format layer
  list(APPEND bloomshard_installed_libraries bloomshard_store)
endif()
install(TARGETS ${bloomshard_installed_libraries} bloomshard_warnings bloomshard_sanitizers
  EXPORT bloomshardTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# Every header under include/ is public: private ones live in src/.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/bloomshard
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp")
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
# Dependents first: store -> core.
set(BLOOMSHARD_PC_LIBS "")
foreach(library IN LISTS bloomshard_installed_libraries)
  string(REPLACE "bloomshard_" "-lbloomshard_" flag ${library})
  string(PREPEND BLOOMSHARD_PC_LIBS "${flag} ")
endforeach()
string(STRIP "${BLOOMSHARD_PC_LIBS}" BLOOMSHARD_PC_LIBS)
configure_file(${PROJECT_SOURCE_DIR}/cmake/bloomshard.pc.in ${PROJECT_BINARY_DIR}/bloomshard.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/bloomshard.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
