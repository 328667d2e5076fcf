#!/usr/bin/env bash
# Runs scoreboard rows (docs/benchmarks.md) for shale's db_bench and RocksDB's db_bench back to back,
# alternating engines, each run in a fresh directory, and prints the median ratio per row
# (shale ops/sec ÷ RocksDB ops/sec), then writes a PNG bar chart of the ratios (CHART, default
# compare_rocksdb.png) with gnuplot.
#
#   tools/compare_rocksdb.sh --scale [-num N] ...   the steady-state rows S1-S8 (compare_scale.sh)
#   tools/compare_rocksdb.sh [-r REPEATS] [-x "EXTRA FLAGS"] [ROW...]
#       rows: B1 .. B11 (default: all), and B3w B4w B5w B10w B12 B12s; EXTRA FLAGS are added to every run
#       of both engines. Every read row (B3-B5, B7-B10) loads a DB in one db_bench process and
#       measures in a second one on the reopened DB (-use_existing_db), the way applications
#       read; B3w, B4w, B5w and B10w are the same reads in the process that wrote the data
#       (its memtable and block cache still warm), not part of the default set. B8 and B9 are
#       latency rows, so their ratio of ops/sec is RocksDB's latency over shale's. B11 is B2's
#       peak resident memory (/usr/bin/time -v) in KiB, and its ratio is shale's over RocksDB's
#       (lower is better). B12 and B12s read a DB loaded with 1,000 range tombstones of 100 keys
#       (one after every 1,000 writes): readrandom, and seekrandom with 10 nexts.
#
# Environment: SHALE_DB_BENCH (default build-release/tools/db_bench, built if missing),
# ROCKSDB_DB_BENCH (default /usr/bin/db_bench from rocksdb-tools), TMPDIR.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "${1:-}" == --scale ]]; then
  shift
  exec tools/compare_scale.sh "$@"
fi

repeats=3
extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    -r) repeats=$2; shift 2 ;;
    -x) read -r -a extra <<<"$2"; shift 2 ;;
    *) break ;;
  esac
done
rows=("$@")
[[ ${#rows[@]} -eq 0 ]] && rows=(B1 B2 B3 B4 B5 B6 B7 B8 B9 B10 B11)

shale=${SHALE_DB_BENCH:-build-release/tools/db_bench}
rocks=${ROCKSDB_DB_BENCH:-/usr/bin/db_bench}
if [[ ! -x "$shale" ]]; then
  SHALE_WITH_ROCKSDB=1 tools/setup.sh
  cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSHALE_BUILD_TESTS=OFF
  cmake --build build-release -j "$(nproc)" --target db_bench
fi
if [[ ! -x "$rocks" ]]; then
  SHALE_WITH_ROCKSDB=1 tools/setup.sh
fi

common=(-key_size=16 -value_size=100 -compression_type=none -bloom_bits=10
        -cache_size=1073741824 -threads=1)
row_flags() {
  case "$1" in
    B1) echo "-benchmarks=fillseq -num=1000000" ;;
    B2) echo "-benchmarks=fillrandom -num=1000000" ;;
    B3) echo "-use_existing_db=true -benchmarks=readrandom -num=1000000" ;;
    B4) echo "-use_existing_db=true -benchmarks=multireadrandom -num=1000000 -batch_size=32 -multiread_batched=true" ;;
    B5) echo "-use_existing_db=true -benchmarks=readseq -num=1000000" ;;
    B3w) echo "-benchmarks=fillrandom,readrandom -num=1000000" ;;
    B4w) echo "-benchmarks=fillrandom,multireadrandom -num=1000000 -batch_size=32 -multiread_batched=true" ;;
    B5w) echo "-benchmarks=fillrandom,readseq -num=1000000" ;;
    B6) echo "-benchmarks=fillrandom -sync=true -threads=16 -num=1250 -key_size=8 -value_size=128" ;;
    B7) echo "-use_existing_db=true -use_direct_reads=true -cache_size=8388608 -benchmarks=multireadrandom -num=2000000 -value_size=256 -batch_size=32 -multiread_batched=true -async_io=true -duration=20" ;;
    B8) echo "-benchmarks=readrandomoperands -use_existing_db=true -avoid_flush_during_recovery=true -write_buffer_size=1048576000 -merge_operator=StringAppendOperator -num=4 -value_size=2048 -threads=2 -duration=5" ;;
    B9) echo "-benchmarks=readrandomoperands -use_existing_db=true -avoid_flush_during_recovery=true -write_buffer_size=1048576000 -merge_operator=StringAppendOperator -num=1 -value_size=8 -threads=1 -duration=5" ;;
    B11) echo "-benchmarks=fillrandom -num=1000000" ;;
    B10) echo "-use_existing_db=true -benchmarks=multireadrandom -num=1000000 -batch_size=32 -multiread_batched=true -multiread_stride=16" ;;
    B12) echo "-use_existing_db=true -benchmarks=readrandom -num=1000000 -cache_size=8388608" ;;
    B12s) echo "-use_existing_db=true -benchmarks=seekrandom -seek_nexts=10 -reads=300000 -num=1000000 -cache_size=8388608" ;;
    B10w) echo "-benchmarks=fillrandom,multireadrandom -num=1000000 -batch_size=32 -multiread_batched=true -multiread_stride=16" ;;
    *) echo "unknown row $1" >&2; exit 2 ;;
  esac
}

# The load step of a row measured on an existing DB (empty: the row starts fresh).
row_load() {
  case "$1" in
    B3 | B4 | B5 | B10) echo "-benchmarks=fillrandom -num=1000000" ;;
    B7) echo "-benchmarks=fillrandom -num=2000000 -value_size=256" ;;
    B12 | B12s) echo "-benchmarks=fillrandom -num=1000000 -writes_per_range_tombstone=1000 -max_num_range_tombstones=1000 -range_tombstone_width=100" ;;
    B8) echo "-benchmarks=mergerandom -merge_operator=StringAppendOperator -num=4 -writes=16384 -value_size=2048 -write_buffer_size=1048576000" ;;
    B9) echo "-benchmarks=mergerandom -merge_operator=StringAppendOperator -num=1 -writes=16384 -value_size=8 -write_buffer_size=1048576000" ;;
    *) echo "" ;;
  esac
}

rocks_version=$("$rocks" --version 2>/dev/null | awk '{ print $NF }')
echo "shale: $shale; RocksDB $rocks_version: $rocks"

work=$(mktemp -d "${TMPDIR:-/tmp}/shale-compare.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Prints the ops/sec of the last result line of a db_bench run.
run_one() {
  local bin=$1 load=$2
  shift 2
  rm -rf "$work/db"
  if [[ -n "$load" ]]; then
    read -r -a load_flags <<<"$load"
    "$bin" -db="$work/db" "${common[@]}" "${load_flags[@]}" >/dev/null 2>&1
  fi
  sync  # the previous run's (or the load's) dirty pages are not written back during this one
  "$bin" -db="$work/db" "$@" 2>/dev/null |
    awk '/ ops\/sec/ { for (i = 1; i < NF; i++) if ($(i + 1) == "ops/sec") v = $i } END { print v }'
}

# Prints the peak resident set size (KiB) of a fresh db_bench run.
run_rss() {
  local bin=$1
  shift
  rm -rf "$work/db"
  sync
  /usr/bin/time -v "$bin" -db="$work/db" "$@" 2>&1 >/dev/null |
    awk -F: '/Maximum resident set size/ { gsub(/ /, "", $2); print $2 }'
}

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# Figures are ops/sec, except B11 (peak RSS in KiB).
printf '%-5s %14s %14s %8s\n' row "shale" "rocksdb" ratio
for row in "${rows[@]}"; do
  read -r -a flags <<<"$(row_flags "$row")"
  ratios=() s_all=() r_all=()
  for ((i = 0; i < repeats; i++)); do
    if [[ "$row" == B11 ]]; then
      r=$(run_rss "$rocks" "${common[@]}" "${flags[@]}" "${extra[@]}")
      s=$(run_rss "$shale" "${common[@]}" "${flags[@]}" "${extra[@]}")
    else
      load=$(row_load "$row")
      r=$(run_one "$rocks" "$load" "${common[@]}" "${flags[@]}" "${extra[@]}")
      s=$(run_one "$shale" "$load" "${common[@]}" "${flags[@]}" "${extra[@]}")
    fi
    s_all+=("$s") r_all+=("$r")
    ratios+=("$(awk -v s="$s" -v r="$r" 'BEGIN { printf "%.3f", (r > 0 ? s / r : 0) }')")
  done
  ratio=$(printf '%s\n' "${ratios[@]}" | median)
  printf '%-5s %14s %14s %8s   (ratios: %s)\n' "$row" \
    "$(printf '%s\n' "${s_all[@]}" | median)" "$(printf '%s\n' "${r_all[@]}" | median)" \
    "$ratio" "${ratios[*]}"
  echo "$row $ratio" >>"$work/ratios.dat"
done

# A bar chart of the ratios (1.0 = parity), when gnuplot is installed.
source "$(dirname "$0")/ratio_chart.sh"
ratio_chart "$work/ratios.dat" "${CHART:-compare_rocksdb.png}" \
  "shale / RocksDB $rocks_version db_bench (B11: memory, lower is better)"
