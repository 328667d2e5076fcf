#!/usr/bin/env bash
# Installs dependencies, builds shale and runs every test.
#   tools/test.sh                      Debug build in build/, the whole suite
#   tools/test.sh --sanitize=address  ASan + UBSan build (clang) in build-asan/, the whole suite
#   tools/test.sh --sanitize=thread   TSan build (clang) in build-tsan/, the concurrency suites
set -euo pipefail
cd "$(dirname "$0")/.."

sanitize=""
for arg in "$@"; do
  case "$arg" in
    --sanitize=address) sanitize=address ;;
    --sanitize=thread) sanitize=thread ;;
    *) echo "usage: $0 [--sanitize=address|thread]" >&2; exit 2 ;;
  esac
done

tools/setup.sh
jobs=$(nproc)
cmake_args=(-G Ninja -DSHALE_WERROR=ON)
ctest_args=(--output-on-failure -j "$jobs" --timeout 900)
case "$sanitize" in
  "")
    dir=build
    cmake_args+=(-DCMAKE_BUILD_TYPE=Debug)
    ;;
  address)
    dir=build-asan
    cmake_args+=(-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang
                 "-DSHALE_SANITIZE=address;undefined" -DSHALE_BUILD_MICROBENCH=OFF)
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    ctest_args+=(-E install_consumer)
    ;;
  thread)
    dir=build-tsan
    cmake_args+=(-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang
                 -DSHALE_SANITIZE=thread -DSHALE_BUILD_MICROBENCH=OFF -DSHALE_BUILD_TOOLS=OFF)
    export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
    ctest_args+=(-R Concurrent)
    ;;
esac

cmake -S . -B "$dir" "${cmake_args[@]}"
cmake --build "$dir" -j "$jobs"
ctest --test-dir "$dir" "${ctest_args[@]}"
