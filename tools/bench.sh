#!/usr/bin/env bash
# Installs dependencies, builds shale in Release and runs the default db_bench suite in a
# temporary directory. Extra arguments are passed to db_bench (e.g. -num=100000).
set -euo pipefail
cd "$(dirname "$0")/.."

tools/setup.sh
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSHALE_BUILD_TESTS=OFF
cmake --build build-release -j "$(nproc)" --target db_bench

dir=$(mktemp -d "${TMPDIR:-/tmp}/shale-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT
build-release/tools/db_bench -db="$dir/db" \
  -benchmarks=fillseq,fillrandom,overwrite,readrandom,readseq -num=1000000 \
  -key_size=16 -value_size=100 "$@"
