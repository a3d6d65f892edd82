#!/usr/bin/env bash
# `report` against `verify` on one full block per game (the aim of issue 10: report ≤ 2 × verify).
#
# Usage: benches/report.sh [ROUNDS] [GAME...]   (default 3 rounds, every built-in game)
#   BIN=path/to/emission-factory  measures that binary instead of building this tree's.
#
# A round runs verify --threads 2, then report --threads 2 (which verifies the block in full
# and makes its tallies in that same pass). Printed per game, medians of the rounds:
#   verify_s, report_s        wall time in seconds (GNU time's %e)
#   verify_cpu, report_cpu    CPU seconds, user + sys (GNU time's %U + %S)
#   wall_x, cpu_x             report ÷ verify
#   report_us                 extra CPU µs per ticket of the report over verify
#   verify_MB, report_MB      peak resident memory (GNU time's %M)
# CPU time is the figure to compare on a shared machine; wall ratios need a quiet one (the load
# average is printed first).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
shift || true
games=("$@")
[ ${#games[@]} -gt 0 ] || games=(ruche-or maxi-ruche-or annee-chance)
. benches/common.sh
# Runs a command, appends "wall_s cpu_s peak_KB" to the file $1.
measure() {
  local out=$1
  shift
  /usr/bin/time -f '%e %U %S %M' -o "$work/t" "$@" >/dev/null 2>"$work/err" \
    || { cat "$work/err" >&2; exit 2; }
  awk '{print $1, $2 + $3, $4}' "$work/t" >>"$out"
}
echo "$(nproc) cores; load average: $(cut -d' ' -f1-3 /proc/loadavg); $rounds rounds; $(basename "$bin") $("$bin" --version | cut -d' ' -f2)"
printf '%-14s %8s %8s %8s %10s %10s %6s %6s %9s %9s %9s\n' \
  game tickets verify_s report_s verify_cpu report_cpu wall_x cpu_x report_us verify_MB report_MB
for game in "${games[@]}"; do
  case $game in
    ruche-or) price=2 ;;
    maxi-ruche-or) price=3 ;;
    annee-chance) price=3 ;;
    *) echo "unknown game $game" >&2; exit 2 ;;
  esac
  folder=emissions/$game/$price/e0001
  "$bin" emit --game "$game" --price "$price" --seed "$seed" --signing-key keys/signing-key.pem \
    --force --quiet --threads 2 >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 2; }
  # emit writes around the page cache: read the block once, unmeasured, so that every round
  # reads it from memory, as the later rounds would anyway.
  cat "$folder"/block-*.csv >/dev/null
  rm -f "$work"/{verify,report}
  for _ in $(seq "$rounds"); do
    measure "$work/verify" "$bin" verify --quiet --public-key keys/public-key.pem --threads 2 "$folder"
    measure "$work/report" "$bin" report --quiet --public-key keys/public-key.pem --threads 2 \
      --json "$work/report.json" "$folder"
  done
  tickets=$(($(grep -c '' "$folder/block-00001.csv") - 1))
  v=$(col "$work/verify" 1) vc=$(col "$work/verify" 2) vm=$(col "$work/verify" 3)
  r=$(col "$work/report" 1) rc=$(col "$work/report" 2) rm=$(col "$work/report" 3)
  awk -v g="$game" -v n="$tickets" -v v="$v" -v vc="$vc" -v vm="$vm" -v r="$r" -v rc="$rc" \
    -v rm="$rm" 'BEGIN {
      printf "%-14s %8d %8.2f %8.2f %10.2f %10.2f %6.2f %6.2f %9.2f %9.1f %9.1f\n",
        g, n, v, r, vc, rc, r / v, rc / vc, (rc - vc) * 1e6 / n, vm / 1024, rm / 1024 }'
  rm -rf emissions/"$game"
done
