# Warnings and sanitizers as interface targets every bloomshard target links.
add_library(bloomshard_warnings INTERFACE)
add_library(bloomshard::warnings ALIAS bloomshard_warnings)
target_compile_options(bloomshard_warnings INTERFACE
  -Wall -Wextra -Wconversion -Wsign-conversion -Wshadow -Wnon-virtual-dtor
  -Wold-style-cast -Wcast-align -Wunused -Woverloaded-virtual -Wpedantic
  -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough
  # GCC 12 reports false -Wrestrict on `std::string + std::string` at -O2
  # and above (GCC bug 105329, fixed in 13).
  $<$<AND:$<CXX_COMPILER_ID:GNU>,$<VERSION_LESS:$<CXX_COMPILER_VERSION>,13>>:-Wno-restrict>)
if(BLOOMSHARD_WERROR)
  target_compile_options(bloomshard_warnings INTERFACE -Werror)
endif()

add_library(bloomshard_sanitizers INTERFACE)
add_library(bloomshard::sanitizers ALIAS bloomshard_sanitizers)
if(BLOOMSHARD_SANITIZE)
  target_compile_options(bloomshard_sanitizers INTERFACE
    -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_link_options(bloomshard_sanitizers INTERFACE -fsanitize=address,undefined)
endif()
