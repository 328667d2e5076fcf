#!/usr/bin/env bash
# Crash loop: runs tools/shale_stress (>= 8 writers by default) against one DB, kills it with
# SIGKILL at a random moment, verifies the DB against the expected state with a separate
# --verify_only run, and repeats. Every acknowledged write must survive, nothing unexpected may
# appear, and every reopen must succeed; the first failure stops the loop (exit 1) and keeps the
# DB, the expected state and the logs for replay.
#
#   tools/crash_test.sh [--cycles N] [--writers N] [--readers N] [--max_key N]
#                       [--column_families N] [--min_ms MS] [--max_ms MS] [--seed S] [--keep]
#
# Defaults: 200 cycles, 8 writers, 2 readers, 20000 keys, each run killed after 100..1000 ms;
# every other run with parallel compactions and subcompactions, every third with dynamic level
# sizing, one in four with CompactRange calls among the writes, one in six switching memtables
# at 8 range tombstones, half (with and without parallel compactions) starting table writeback
# every 64 KiB, one in three with iterators seeking past runs of versions after one, every other
# with read-triggered compactions of L0 after 100 seeks per file, half without synced writes.
# With --column_families N > 1 every write goes to N families in one batch (a batch must
# survive in all of them or none), and every other run flushes them atomically.
# Environment: SHALE_STRESS (default build/tools/shale_stress), TMPDIR.
set -euo pipefail
cd "$(dirname "$0")/.."

cycles=200 writers=8 readers=2 max_key=20000 families=1 min_ms=100 max_ms=1000 seed=$(date +%s)
keep=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --cycles) cycles=$2; shift 2 ;;
    --writers) writers=$2; shift 2 ;;
    --readers) readers=$2; shift 2 ;;
    --max_key) max_key=$2; shift 2 ;;
    --column_families) families=$2; shift 2 ;;
    --min_ms) min_ms=$2; shift 2 ;;
    --max_ms) max_ms=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "usage: $0 [--cycles N] [--writers N] [--readers N] [--max_key N]" \
            "[--column_families N] [--min_ms MS] [--max_ms MS] [--seed S] [--keep]" >&2; exit 2 ;;
  esac
done
stress=${SHALE_STRESS:-build/tools/shale_stress}
if [[ ! -x "$stress" ]]; then
  echo "crash_test: $stress not found (build the tools first, or set SHALE_STRESS)" >&2
  exit 2
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/shale-crash.XXXXXX")
db=$dir/db
state=$dir/expected_state
common=(--db="$db" --expected_state="$state" --writers="$writers" --readers="$readers"
        --max_key="$max_key" --column_families="$families")
echo "crash_test: $cycles cycles, $writers writers, $readers readers, $max_key keys," \
     "$families column families," \
     "kill after ${min_ms}..${max_ms} ms, seed $seed, in $dir"

"$stress" "${common[@]}" --destroy --duration=0 --ops_per_writer=1 >"$dir/init.log" 2>&1 || {
  echo "crash_test: could not create the DB:" >&2; cat "$dir/init.log" >&2; exit 1; }

RANDOM=$((seed % 32768))
found_new=0 found_old=0
start=$SECONDS
for ((c = 1; c <= cycles; c++)); do
  run_ms=$((min_ms + RANDOM % (max_ms - min_ms + 1)))
  # SIGKILL to the stress process alone after run_ms (exit 137); timeout returns once it is gone
  # (its LOCK released). A run that ends by itself before has failed a check.
  # Every other cycle runs up to 3 compactions at once and splits L0 compactions in parts;
  # every third sizes levels dynamically (the DB switches sizing between runs); one in four
  # also has the writers call CompactRange now and then; one in five has queued writers sleep at
  # once instead of spinning first; one in seven reads through an LRU block cache instead of
  # the CLOCK one; one in six switches memtables once they hold 8 range tombstones; half start
  # table writeback every 64 KiB (--bytes_per_sync), with and without parallel compactions; one
  # in three has iterators seek past a run of versions of a key after one of them; one in three
  # pipelines writes (WAL and memtable stages); every other (the cycles without parallel
  # compactions) compacts L0 after 100 seeks into one of its files (the readers' scans seek);
  # half write without syncs, so that the live WAL copies every record into its mapping (a log
  # synced twice appends with write(2)) and a kill may land inside a copy.
  parallel=()
  if ((c % 2 == 0)); then parallel=(--max_background_jobs=4 --subcompactions=3); fi
  if ((c % 3 == 0)); then parallel+=(--level_compaction_dynamic_level_bytes); fi
  if ((c % 4 == 1)); then parallel+=(--compact_range_one_in=1000); fi
  if ((c % 5 == 2)); then parallel+=(--enable_write_thread_adaptive_yield=false); fi
  if ((c % 7 == 3)); then parallel+=(--cache_type=lru_cache); fi
  if ((c % 6 == 5)); then parallel+=(--memtable_max_range_deletions=8); fi
  if ((c % 4 == 1 || c % 4 == 2)); then parallel+=(--bytes_per_sync=65536); fi
  if ((c % 3 == 1)); then parallel+=(--max_sequential_skip_in_iterations=1); fi
  if ((c % 3 == 2)); then parallel+=(--enable_pipelined_write); fi
  if ((c % 2 == 1)); then parallel+=(--read_compaction_bytes_per_seek=1099511627776); fi
  if ((families > 1 && c % 2 == 1)); then parallel+=(--atomic_flush); fi
  if ((c % 4 == 0 || c % 4 == 3)); then parallel+=(--sync_fraction=0); fi
  status=0
  timeout --foreground -s KILL "$(printf '%d.%03d' $((run_ms / 1000)) $((run_ms % 1000)))" \
    "$stress" "${common[@]}" "${parallel[@]}" --duration=3600 --seed=$((seed * 100003 + c)) \
    >"$dir/run.log" 2>&1 || status=$?
  if [[ $status -ne 137 ]]; then
    echo "crash_test: cycle $c: the stress run ended before its kill (exit $status);" \
         "DB and logs kept in $dir" >&2
    cat "$dir/run.log" >&2
    exit 1
  fi
  status=0
  "$stress" "${common[@]}" --verify_only >"$dir/verify.log" 2>&1 || status=$?
  if [[ $status -ne 0 ]]; then
    what="verification failed"
    [[ $status -eq 3 ]] && what="reopen failed"
    echo "crash_test: cycle $c: $what (exit $status); DB and logs kept in $dir" >&2
    cat "$dir/run.log" "$dir/verify.log" >&2
    exit 1
  fi
  # "verified N keys: L live, P in-flight writes found new, O old, B bad"
  read -r new old < <(sed -n 's/.*live, \([0-9]*\) in-flight writes found new, \([0-9]*\) old.*/\1 \2/p' \
                        "$dir/verify.log")
  found_new=$((found_new + ${new:-0}))
  found_old=$((found_old + ${old:-0}))
  if ((c % 50 == 0)); then echo "crash_test: $c cycles verified ($((SECONDS - start)) s)"; fi
done
echo "crash_test: $cycles cycles in $((SECONDS - start)) s: 0 lost writes, 0 unexpected values," \
     "0 failed opens; writes in flight at the kills: $found_new recovered new, $found_old old"
if [[ $keep -eq 0 ]]; then rm -rf "$dir"; fi
