#!/usr/bin/env bash
# Installs what shale needs to build, test and benchmark on Debian 12 (run as root).
# Idempotent: packages already present are skipped, and apt is not touched when none is missing.
set -euo pipefail

packages=(
  g++ clang cmake ninja-build pkg-config git
  libgtest-dev libgmock-dev libbenchmark-dev
  liburing-dev libzstd-dev libfmt-dev libxxhash-dev libgflags-dev
  python3  # tools/compaction_report.py (and its test)
)
# RocksDB's db_bench, for side-by-side comparisons (tools/compare_rocksdb.sh).
# (/usr/bin/time measures peak memory for row B11; gnuplot draws the chart.)
if [[ "${SHALE_WITH_ROCKSDB:-0}" == 1 ]]; then packages+=(rocksdb-tools time gnuplot-nox); fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
echo "setup: installing ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
  echo "setup: must run as root to install packages" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
