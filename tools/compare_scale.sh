#!/usr/bin/env bash
# The steady-state suite at scale (rows S1-S8, docs/benchmarks.md): shale's db_bench and RocksDB's
# run the same phases on one DB each, engines alternating phase by phase, and every phase reports
# ops/s, P50/P99/P99.9 latency (µs), device bytes written per user byte, the engine's own flush
# and compaction bytes, and the share of the phase's time writes were stalled or slowed.
#
#   tools/compare_scale.sh [-num N] [-duration S] [-x "EXTRA FLAGS"]
#       (also: tools/compare_rocksdb.sh --scale ...)
#   N: keys of S1/S2 (default 10000000); S: seconds of S4-S6 (default 30). CHART: the PNG of the
#   ratios (default compare_scale.png).
#
#   S1 fillrandom N        S2 overwrite N         S3 waitforcompaction, then bytes on disk
#   S4 readrandom, direct IO, 64 MiB cache        S5 seekrandom -seek_nexts=10, direct IO
#   S6 readwhilewriting, writer at 4 MiB/s        S7 fillrandom 1M x 1,000 B by 2 threads (own DB)
#   S8 peak RSS over S1-S6
#
# Device bytes are the sectors written of the block device holding TMPDIR (/sys/class/block/*/stat),
# read after `sync` before and after each phase, so they include the WAL, flushes, compactions
# and whatever else wrote to that device meanwhile: run it on an otherwise idle machine. Reads
# (S4, S5) start with the page cache dropped (root only; skipped otherwise, and said).
# Environment: SHALE_DB_BENCH, ROCKSDB_DB_BENCH, TMPDIR, as for compare_rocksdb.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

num=10000000
duration=30
extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    -num) num=$2; shift 2 ;;
    -duration) duration=$2; shift 2 ;;
    -x) read -r -a extra <<<"$2"; shift 2 ;;
    *) echo "usage: $0 [-num N] [-duration S] [-x \"EXTRA FLAGS\"]" >&2; exit 2 ;;
  esac
done

shale=${SHALE_DB_BENCH:-build-release/tools/db_bench}
rocks=${ROCKSDB_DB_BENCH:-/usr/bin/db_bench}
for bin in "$shale" "$rocks"; do
  if [[ ! -x "$bin" ]]; then
    echo "$0: no db_bench at $bin (build-release/tools/db_bench: tools/compare_rocksdb.sh builds it)" >&2
    exit 2
  fi
done
rocks_version=$("$rocks" --version 2>/dev/null | awk '{ print $NF }')

work=$(mktemp -d "${TMPDIR:-/tmp}/shale-scale.XXXXXX")
trap 'rm -rf "$work"' EXIT
device=$(basename "$(df --output=source "$work" | tail -n 1)")
stat_file=/sys/class/block/$device/stat
[[ -r "$stat_file" ]] || { echo "$0: cannot read $stat_file" >&2; exit 2; }
sectors_written() { awk '{ print $7 }' "$stat_file"; }

common=(-key_size=16 -value_size=100 -compression_type=none -bloom_bits=10
        -write_buffer_size=67108864 -max_write_buffer_number=2 -max_background_jobs=2
        -level0_file_num_compaction_trigger=4 -target_file_size_base=67108864
        -max_bytes_for_level_base=268435456 -cache_size=67108864 -histogram=1 -statistics=1)

drop_caches() {
  if [[ -w /proc/sys/vm/drop_caches ]]; then
    sync
    echo 3 >/proc/sys/vm/drop_caches
  else
    echo "  (page cache not dropped: not root)" >&2
  fi
}

# run ENGINE DB USER_BYTES FLAGS...: one phase; appends "engine phase ops p50 p99 p999 dev_ratio
# flush_mb compact_mb stall_pct rss_kib" to $work/rows and echoes the output to $work/last.
run_phase() {
  local engine=$1 db=$2 user_bytes=$3 phase=$4
  shift 4
  local bin=$shale
  [[ "$engine" == rocksdb ]] && bin=$rocks
  sync
  local before start end
  before=$(sectors_written)
  start=$(date +%s.%N)
  /usr/bin/time -v "$bin" -db="$db" "${common[@]}" "$@" "${extra[@]}" >"$work/last" 2>&1 || {
    echo "$engine $phase failed:" >&2
    tail -n 20 "$work/last" >&2
    exit 1
  }
  end=$(date +%s.%N)
  sync
  local written=$(( ($(sectors_written) - before) * 512 ))
  echo "$engine $phase $written" >>"$work/written"
  awk -v engine="$engine" -v phase="$phase" -v written="$written" -v user="$user_bytes" \
      -v secs="$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" '
    BEGIN { ops = p50 = p99 = p999 = "-"; flush = compact = stall = rss = 0 }
    / ops\/sec/ { for (i = 1; i < NF; i++) if ($(i + 1) == "ops/sec") ops = $i }
    /^Percentiles:/ { p50 = $3; p99 = $7; p999 = $9 }
    # The tickers of each engine (rocksdb.* or shale.*), not the remote.compact.* ones of RocksDB.
    $1 ~ /^[a-z]+\.flush\.write\.bytes$/ { flush = $NF }
    $1 ~ /^[a-z]+\.compact\.write\.bytes$/ { compact = $NF }
    $1 ~ /^[a-z]+\.stall\.micros$/ { stall = $NF }
    /Maximum resident set size/ { rss = $NF }
    END {
      printf "%s %s %s %s %s %s %s %.0f %.0f %.1f %s\n", engine, phase, ops, p50, p99, p999,
             (user > 0 ? sprintf("%.2f", written / user) : "-"), flush / 1048576,
             compact / 1048576, (secs > 0 ? 100 * stall / 1e6 / secs : 0), rss
    }' "$work/last" >>"$work/rows"
}

user_fill=$((num * 116))
echo "steady state: $num keys; shale $shale; RocksDB $rocks_version $rocks; device $device"
for engine in rocksdb shale; do rm -rf "$work/$engine"; done
for engine in rocksdb shale; do
  run_phase "$engine" "$work/$engine" "$user_fill" S1 -benchmarks=fillrandom -num="$num"
done
for engine in rocksdb shale; do
  run_phase "$engine" "$work/$engine" "$user_fill" S2 -use_existing_db=true \
    -benchmarks=overwrite -num="$num"
done
for engine in rocksdb shale; do
  run_phase "$engine" "$work/$engine" 0 S3 -use_existing_db=true \
    -benchmarks=waitforcompaction -num="$num"
  echo "$engine S3-bytes $(du -sb "$work/$engine" | awk '{ print $1 }')" >>"$work/disk"
done
# The LSM shape the reads below meet: a seek reads a block from every sorted run (each L0 file
# and each level), so S4/S5 depend on how many L0 files the load happened to leave.
for engine in rocksdb shale; do
  bin=$shale
  [[ "$engine" == rocksdb ]] && bin=$rocks
  "$bin" -db="$work/$engine" "${common[@]}" -use_existing_db=true -benchmarks=levelstats \
      -num="$num" 2>/dev/null |
    awk -v engine="$engine" '
      /^ *[0-9]+ +[0-9]+/ { if ($2 > 0) line = line sprintf(" L%d:%d", $1, $2) }
      END { printf "%s files per level after S3:%s\n", engine, line }' >>"$work/shape"
done
for engine in rocksdb shale; do
  drop_caches
  run_phase "$engine" "$work/$engine" 0 S4 -use_existing_db=true -use_direct_reads=true \
    -benchmarks=readrandom -num="$num" -duration="$duration"
done
for engine in rocksdb shale; do
  drop_caches
  run_phase "$engine" "$work/$engine" 0 S5 -use_existing_db=true -use_direct_reads=true \
    -benchmarks=seekrandom -seek_nexts=10 -num="$num" -duration="$duration"
done
for engine in rocksdb shale; do
  run_phase "$engine" "$work/$engine" 0 S6 -use_existing_db=true -benchmarks=readwhilewriting \
    -threads=1 -benchmark_write_rate_limit=4194304 -num="$num" -duration="$duration"
done
for engine in rocksdb shale; do
  rm -rf "$work/$engine"
  # Each of the 2 threads writes -num records: 1M records of 1,000 bytes in all.
  run_phase "$engine" "$work/$engine-s7" $((1000000 * 1016)) S7 -benchmarks=fillrandom \
    -num=500000 -value_size=1000 -threads=2
  rm -rf "$work/$engine-s7"
done

# The table: one line per phase and engine, then the ratios (shale ÷ RocksDB; for latency,
# device bytes, disk bytes and RSS lower is better).
printf '%-8s %-3s %10s %9s %9s %9s %8s %9s %10s %7s %10s\n' engine row ops/s P50 P99 P99.9 \
  dev/user flush_MB compact_MB stall% rss_KiB
sort -k2,2 -k1,1 "$work/rows" |
  awk '{ printf "%-8s %-3s %10s %9s %9s %9s %8s %9s %10s %7s %10s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 }'
echo
echo "ratios (shale / RocksDB):"
awk '
  { key = $2; if ($1 == "shale") { s_ops[key] = $3; s_p999[key] = $6; s_dev[key] = $7; s_rss[key] = $11 }
    else { r_ops[key] = $3; r_p999[key] = $6; r_dev[key] = $7; r_rss[key] = $11 } }
  END {
    for (k in s_ops) {
      line = k ":"
      if (r_ops[k] + 0 > 0) line = line sprintf(" ops/s %.2f", s_ops[k] / r_ops[k])
      if (r_p999[k] + 0 > 0) line = line sprintf(" P99.9 %.2f", s_p999[k] / r_p999[k])
      if (r_dev[k] + 0 > 0) line = line sprintf(" device-bytes %.2f", s_dev[k] / r_dev[k])
      if (line != k ":") print line
      if (s_rss[k] > s_peak && k != "S7") s_peak = s_rss[k]
      if (r_rss[k] > r_peak && k != "S7") r_peak = r_rss[k]
    }
    if (r_peak > 0) printf "S8: peak RSS over S1-S6 %d KiB vs %d KiB: %.2f\n", s_peak, r_peak, s_peak / r_peak
  }' "$work/rows" | sort
# S1-S3 together: an engine may leave compaction work at the end of S2 that it does in S3.
awk '$2 == "S1" || $2 == "S2" || $2 == "S3" { w[$1] += $3 }
  END { printf "S1-S3: device bytes %.0f MB vs %.0f MB: %.2f\n", w["shale"] / 1e6, w["rocksdb"] / 1e6,
               (w["rocksdb"] > 0 ? w["shale"] / w["rocksdb"] : 0) }' "$work/written"
awk '$2 == "S1" || $2 == "S2" || $2 == "S3" { c[$1] += $9 }
  END { printf "S1-S3: compaction %d MB vs %d MB: %.2f\n", c["shale"], c["rocksdb"],
               (c["rocksdb"] > 0 ? c["shale"] / c["rocksdb"] : 0) }' "$work/rows"
awk '{ b[$1] = $3 } END { printf "S3: bytes on disk %d vs %d: %.2f\n", b["shale"], b["rocksdb"], b["shale"] / b["rocksdb"] }' "$work/disk"
cat "$work/shape"

# A bar chart of the ratios (CHART, default compare_scale.png), when gnuplot is installed; every
# bar reads higher-is-better for shale: ops/s as shale ÷ RocksDB, P99.9, device bytes, disk bytes
# and peak RSS as RocksDB ÷ shale.
awk -v disk_s="$(awk '$1 == "shale" { print $3 }' "$work/disk")" \
    -v disk_r="$(awk '$1 == "rocksdb" { print $3 }' "$work/disk")" '
  { k = $2; if ($1 == "shale") { so[k] = $3; sp[k] = $6; sd[k] = $7; sr[k] = $11 }
    else { ro[k] = $3; rp[k] = $6; rd[k] = $7; rr[k] = $11 } }
  END {
    n = split("S1 S2 S4 S5 S6 S7", rows, " ")
    for (i = 1; i <= n; i++) { k = rows[i]; if (ro[k] + 0 > 0) printf "\"%s ops/s\" %.3f\n", k, so[k] / ro[k] }
    for (i = 1; i <= n; i++) { k = rows[i]; if (sp[k] + 0 > 0) printf "\"%s P99.9\" %.3f\n", k, rp[k] / sp[k] }
    for (i = 1; i <= n; i++) { k = rows[i]; if (sd[k] + 0 > 0) printf "\"%s device\" %.3f\n", k, rd[k] / sd[k] }
    if (disk_s > 0) printf "\"S3 disk\" %.3f\n", disk_r / disk_s
    for (k in so) if (k != "S7") { if (sr[k] > speak) speak = sr[k]; if (rr[k] > rpeak) rpeak = rr[k] }
    if (speak > 0) printf "\"S8 RSS\" %.3f\n", rpeak / speak
  }' "$work/rows" >"$work/chart.dat"
source "$(dirname "$0")/ratio_chart.sh"
ratio_chart "$work/chart.dat" "${CHART:-compare_scale.png}" \
  "shale vs RocksDB $rocks_version, $num keys: higher is better for shale (ops/s: shale / RocksDB; P99.9, device, disk, RSS: RocksDB / shale)" 1100
