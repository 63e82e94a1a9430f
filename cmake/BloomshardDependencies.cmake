# Every dependency is a Debian package found here; nothing is vendored or
# downloaded at build time. setup.sh installs the packages.
find_package(MPI REQUIRED COMPONENTS C CXX)

# Debian ships no HDF5 CMake config: FindHDF5 finds the parallel build via
# h5pcc. A serial HDF5 cannot write collective checkpoints, so refuse it.
# Debian's serial HDF5 (libhdf5-dev, for the Python module) may be
# installed too: HDF5_PREFER_PARALLEL makes FindHDF5 try h5pcc before h5cc,
# and the check below fails loudly should it ever pick the serial one.
set(HDF5_PREFER_PARALLEL TRUE)
find_package(HDF5 REQUIRED COMPONENTS C)
if(NOT HDF5_IS_PARALLEL)
  message(FATAL_ERROR "bloomshard needs a parallel (MPI) HDF5; found a serial one. "
                      "Install libhdf5-openmpi-dev.")
endif()

find_package(Boost 1.74 REQUIRED COMPONENTS program_options)
find_package(ZLIB REQUIRED)
find_package(simdjson REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(xxhash REQUIRED IMPORTED_TARGET libxxhash)
pkg_check_modules(zstd REQUIRED IMPORTED_TARGET libzstd)
# gzip: inputs inflated by Intel ISA-L's igzip (libisal-dev), outputs
# compressed by libdeflate (libdeflate-dev); docs/performance.md, "gzip codecs".
pkg_check_modules(isal REQUIRED IMPORTED_TARGET libisal)
pkg_check_modules(libdeflate REQUIRED IMPORTED_TARGET libdeflate)
# libdeflate's static archive where libdeflate-dev ships one (Debian 12
# does): the same release compresses ~1.4x faster at level 6 linked from it
# than from Debian's libdeflate.so.0, with the same bytes (docs/performance.md,
# "libdeflate from its static archive"). Only the io layer's compressor
# calls it, and only executables link the io layer, so the archive's
# position-dependent code is fine. The shared library where there is none.
option(BLOOMSHARD_LIBDEFLATE_STATIC "link libdeflate from libdeflate.a where it exists" ON)
add_library(bloomshard_libdeflate INTERFACE)
find_library(BLOOMSHARD_LIBDEFLATE_ARCHIVE NAMES libdeflate.a
             HINTS ${libdeflate_LIBRARY_DIRS} NO_CACHE)
if(BLOOMSHARD_LIBDEFLATE_STATIC AND BLOOMSHARD_LIBDEFLATE_ARCHIVE)
  target_include_directories(bloomshard_libdeflate SYSTEM INTERFACE ${libdeflate_INCLUDE_DIRS})
  target_link_libraries(bloomshard_libdeflate INTERFACE ${BLOOMSHARD_LIBDEFLATE_ARCHIVE})
  message(STATUS "libdeflate: ${BLOOMSHARD_LIBDEFLATE_ARCHIVE} (static)")
else()
  target_link_libraries(bloomshard_libdeflate INTERFACE PkgConfig::libdeflate)
  message(STATUS "libdeflate: the shared library")
endif()
pkg_check_modules(utf8proc REQUIRED IMPORTED_TARGET libutf8proc)
# SHA-256 digest keys; libssl-dev, which libhdf5-openmpi-dev pulls in.
pkg_check_modules(libcrypto REQUIRED IMPORTED_TARGET libcrypto)

# HDF5's include dirs lack mpi.h: one interface target bundles both.
add_library(bloomshard_hdf5 INTERFACE)
add_library(bloomshard::hdf5 ALIAS bloomshard_hdf5)
target_include_directories(bloomshard_hdf5 SYSTEM INTERFACE ${HDF5_C_INCLUDE_DIRS})
target_compile_definitions(bloomshard_hdf5 INTERFACE ${HDF5_C_DEFINITIONS})
target_link_libraries(bloomshard_hdf5 INTERFACE ${HDF5_C_LIBRARIES} MPI::MPI_C)
