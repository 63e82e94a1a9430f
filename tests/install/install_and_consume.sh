#!/usr/bin/env bash
# cmake --install of this build into a fresh prefix, then a consumer project
# built against it twice: through find_package(bloomshard) and through
# pkg-config. Both programs must run and pass their own checks.
# Usage: install_and_consume.sh BUILD_DIR CONSUMER_SOURCE_DIR
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse install_and_consume.sh "build consumer" "$@"
harness_tmp install install
tmp=$TMP

cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log"
for f in bin/bloomshard include/bloomshard/core/scalable_bloom.hpp share/man/man1/bloomshard.1; do
  [[ -e $tmp/prefix/$f ]] || fail "not installed: $f"
done
config=$(find "$tmp/prefix" -name bloomshardConfig.cmake | head -n1)
[[ -n $config ]] || fail "no bloomshardConfig.cmake installed"

# 1. CMake package. The build tree is gone from the search path: only the
#    prefix can satisfy find_package.
cmake -S "$consumer" -B "$tmp/cmake-build" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_BUILD_TYPE=Release >"$tmp/configure.log" || { cat "$tmp/configure.log" >&2; exit 1; }
cmake --build "$tmp/cmake-build" -j2 >"$tmp/build.log" || { cat "$tmp/build.log" >&2; exit 1; }
"$tmp/cmake-build/core_consumer"
versions=$("$tmp/cmake-build/app_consumer")
[[ $versions == *$'\nhash scheme: '* ]] || fail "app_consumer printed no hash scheme"

# 2. pkg-config (relocatable: the prefix is not the one configured).
pc_dir=$(dirname "$(find "$tmp/prefix" -name bloomshard.pc | head -n1)")
flags=$(PKG_CONFIG_PATH=$pc_dir pkg-config --cflags --libs bloomshard)
# shellcheck disable=SC2086
c++ -O1 -o "$tmp/pc_core_consumer" "$consumer/core_consumer.cpp" $flags
"$tmp/pc_core_consumer"
echo "install and consume: ok"
