#!/usr/bin/env bash
# bloomshard setup on Debian 12, as root. The README's two commands:
#   bash setup.sh          install what is missing, build (release), run the demo job
#   bash setup.sh test     build if needed, then run the whole test suite (ctest)
# Steps can be run alone: deps | build | demo | test.
set -euo pipefail
cd "$(dirname "$0")"

# Everything the project needs from Debian, and nothing else.
PACKAGES=(
  build-essential cmake pkg-config git ca-certificates
  libopenmpi-dev openmpi-bin libhdf5-openmpi-dev hdf5-tools
  libboost-program-options-dev googletest libgtest-dev libbenchmark-dev
  libxxhash-dev libzstd-dev zstd zlib1g-dev libsimdjson-dev libutf8proc-dev
  python3 slurm-wlm munge redis-server hyperfine time procps
  unicode-data bzip2 clang libclang-rt-14-dev valgrind
)

# Open MPI refuses root and more ranks than cores without these; with more
# ranks than cores, idle ranks must yield instead of busy-polling.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1

deps() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "setup: all ${#PACKAGES[@]} packages present"
    return
  fi
  echo "setup: installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

build() {
  cmake --preset release >/dev/null
  cmake --build --preset release
  echo "setup: binary at $(pwd)/build/release/bin/bloomshard"
}

demo() {
  local bin=build/release/bin/bloomshard work=build/demo
  rm -rf "$work"
  "$bin" synth --records 200000 --dup-rate 0.3 --files 6 --compress zst --out "$work/corpus"
  mpiexec -n 2 "$bin" dedup --config jobs/demo.ini \
    --input "$work/corpus" --output "$work/out" --metrics "$work/metrics.json"
  echo "setup: demo outputs in $work/out, metrics in $work/metrics.json"
}

run_tests() {
  [ -x build/release/bin/bloomshard ] || build
  ctest --preset release
}

case "${1:-all}" in
  all) deps; build; demo ;;
  deps) deps ;;
  build) build ;;
  demo) demo ;;
  test) run_tests ;;
  *) echo "usage: bash setup.sh [all|deps|build|demo|test]" >&2; exit 2 ;;
esac
