#!/usr/bin/env bash
# Emit a block, then verify it at once, as it was left (emit writes around the page cache, so
# verify reads it from the disk; with --page-cache, from memory). One block per game.
#
# Usage: benches/emit_then_verify.sh [ROUNDS] [BIN...]   (default 3 rounds, this tree's build)
#   EMIT_ARGS="--page-cache"   extra arguments for emit
# Printed per game and binary, medians of the rounds: emit wall and CPU µs per ticket
# (`perf stat -e task-clock` ÷ tickets), verify's, and the CPU of both. Needs perf.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
shift || true
bins=("$@")
for i in "${!bins[@]}"; do bins[i]=$(realpath "${bins[i]}"); done
[ ${#bins[@]} -eq 0 ] || BIN=${bins[0]}
command -v perf >/dev/null || { echo "perf is missing: apt-get install -y linux-perf" >&2; exit 2; }
. benches/common.sh
[ ${#bins[@]} -gt 0 ] || bins=("$bin")
# Runs a command; appends "wall_s cpu_ms" to the file $1.
measure() {
  local out=$1
  shift
  perf stat -e task-clock -o p -- "$@" >/dev/null 2>err || { cat err >&2; exit 2; }
  echo "$(awk '$3 == "time" && $4 == "elapsed" {print $1}' p)" \
    "$(awk '$3 == "task-clock" {gsub(",", "", $1); print $1}' p)" >>"$out"
}
echo "$(nproc) cores; load average: $(cut -d' ' -f1-3 /proc/loadavg); $rounds rounds"
for g in "ruche-or 2 900000" "maxi-ruche-or 3 7500000" "annee-chance 3 2000000"; do
  read -r game price tickets <<<"$g"
  for bin in "${bins[@]}"; do
    rm -f e v
    for _ in $(seq "$rounds"); do
      rm -rf out
      sync
      measure e "$bin" emit --game "$game" --price "$price" --seed "$seed" \
        --signing-key keys/signing-key.pem --quiet --threads 2 --out out ${EMIT_ARGS:-}
      measure v "$bin" verify --quiet --public-key keys/public-key.pem --threads 2 \
        "out/$game/$price/e0001/block-00001.csv"
    done
    ew=$(cut -d' ' -f1 e | median) ec=$(cut -d' ' -f2 e | median)
    vw=$(cut -d' ' -f1 v | median) vc=$(cut -d' ' -f2 v | median)
    awk -v g="$game" -v b="$(basename "$bin")" -v n="$tickets" -v ew="$ew" -v ec="$ec" \
      -v vw="$vw" -v vc="$vc" 'BEGIN {
        printf "%-14s %-20s emit %.3f s %.3f us | verify after %.3f s %.3f us | both %.3f us\n",
          g, b, ew, ec * 1000 / n, vw, vc * 1000 / n, (ec + vc) * 1000 / n }'
  done
done
