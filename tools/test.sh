#!/usr/bin/env bash
# Installs dependencies, builds shale and runs every test.
#   tools/test.sh                      Debug build in build/, the whole suite
#   tools/test.sh --sanitize=address  ASan + UBSan build (clang, -O1) in build-asan/, the whole
#                                      suite
#   tools/test.sh --sanitize=thread   TSan build (clang) in build-tsan/, the concurrency suites
#   tools/test.sh --invariants         Release build with SHALE_ASSERT on (-DSHALE_INVARIANTS=ON) in
#                                      build-invariants/: the randomized model test, longer runs
#   tools/test.sh --fuzz               libFuzzer targets, each run for FUZZ_SECONDS (default 60),
#                                      from the same build-asan/ (a run after --sanitize=address
#                                      builds nothing new)
set -euo pipefail
cd "$(dirname "$0")/.."

sanitize=""
for arg in "$@"; do
  case "$arg" in
    --sanitize=address) sanitize=address ;;
    --sanitize=thread) sanitize=thread ;;
    --invariants) sanitize=invariants ;;
    --fuzz) sanitize=fuzz ;;
    *) echo "usage: $0 [--sanitize=address|thread] [--invariants] [--fuzz]" >&2; exit 2 ;;
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
  address | fuzz)
    # One ASan + UBSan build serves the suite and the libFuzzer targets: the library carries
    # libFuzzer's coverage instrumentation and is compiled at -O1 (the sanitizers' documented
    # level: the suite runs about twice as fast as at -O0, and so do the fuzzers); the tests
    # compile at -O0, which takes half the time.
    dir=build-asan
    cmake_args+=(-DCMAKE_BUILD_TYPE=Debug -DSHALE_LIBRARY_OPTIONS=-O1
                 -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang
                 "-DSHALE_SANITIZE=address;undefined" -DSHALE_BUILD_FUZZERS=ON
                 -DSHALE_BUILD_MICROBENCH=OFF)
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
    if [[ "$sanitize" == fuzz ]]; then
      export ASAN_OPTIONS=detect_leaks=1
    fi
    # The model test at 1,000 operations per seed: the Debug and invariants runs take it to
    # 4,000 and 6,000.
    export SHALE_MODEL_OPS=${SHALE_MODEL_OPS:-1000}
    # The table bit-flip sweeps flip one bit per byte (every bit in the Debug run), and the
    # power-loss sweep crashes at 6 points per case (20 in the Debug run).
    export SHALE_BITFLIP_ONE_PER_BYTE=1
    export SHALE_CRASH_POINTS=${SHALE_CRASH_POINTS:-6}
    ctest_args+=(-E install_consumer)
    ;;
  thread)
    dir=build-tsan
    cmake_args+=(-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang
                 -DSHALE_SANITIZE=thread -DSHALE_BUILD_MICROBENCH=OFF -DSHALE_BUILD_TOOLS=OFF)
    export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
    ctest_args+=(-R Concurrent)
    # Only the files holding those suites are compiled.
    only=$(grep -l 'Concurrent' tests/*_test.cc | xargs -n1 basename | paste -sd'|')
    cmake_args+=("-DSHALE_TEST_ONLY=^($only)\$")
    ;;
  invariants)
    dir=build-invariants
    cmake_args+=(-DCMAKE_BUILD_TYPE=Release -DSHALE_INVARIANTS=ON -DSHALE_BUILD_MICROBENCH=OFF
                 -DSHALE_BUILD_TOOLS=OFF)
    # The model test at 1.5 times its default length, and the check of the macro itself.
    export SHALE_MODEL_OPS=${SHALE_MODEL_OPS:-6000}
    ctest_args+=(-R 'DBModelTest|Invariants')
    cmake_args+=("-DSHALE_TEST_ONLY=^(db_model_test|invariants_test)\\.cc\$")
    ;;
esac

cmake -S . -B "$dir" "${cmake_args[@]}"
cmake --build "$dir" -j "$jobs"
if [[ "$sanitize" == fuzz ]]; then
  seconds=${FUZZ_SECONDS:-60}
  for fuzzer in "$dir"/tests/fuzz/*_fuzzer; do
    name=$(basename "$fuzzer")
    # The run's corpus starts as a copy of the committed seeds (tests/fuzz/corpus/<name>/, made
    # by make_seeds); new inputs go to the copy only.
    corpus=$(mktemp -d "${TMPDIR:-/tmp}/shale-corpus.XXXXXX")
    seeds=tests/fuzz/corpus/$name
    if [[ -d "$seeds" ]]; then
      cp -R "$seeds"/. "$corpus"/
    fi
    echo "== $name: ${seconds}s, $(find "$corpus" -type f | wc -l) seeds"
    # Findings are written to the build dir so CI keeps the reproducer.
    status=0
    "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$dir/$name-" "$corpus" 2>&1 | tail -n 15 ||
      status=${PIPESTATUS[0]}
    rm -rf "$corpus"
    if [[ $status -ne 0 ]]; then
      echo "$name found a problem (exit $status); reproducer in $dir/" >&2
      exit 1
    fi
  done
  exit 0
fi
ctest --test-dir "$dir" "${ctest_args[@]}"
if [[ -z "$sanitize" ]]; then
  # The reliability tests' figures (bits flipped, crash points, faults injected and surfaced).
  echo "== reliability figures"
  grep -h '^figure: ' "$dir/Testing/Temporary/LastTest.log" | sed 's/^figure: /  /' | sort || true
fi
