#!/usr/bin/env bash
# End-to-end speed of emit and verify against `cat` copying the same bytes, one block per game.
#
# Usage: benches/end_to_end.sh [ROUNDS] [GAME...]   (default 5 rounds, every built-in game)
#   BIN=path/to/emission-factory  measures that binary instead of building this tree's.
#   SCALING=0                     skips the --threads 1 runs (the scaling column shows "-").
#
# A round runs, once each: emit --threads 2, cat of the block, verify --threads 2, and (unless
# SCALING=0) emit and verify with --threads 1; the block is read once, unmeasured, after each emit
# (emit writes around the page cache). Printed per game, medians of the rounds:
#   emit_s, verify_s, cat_s       wall time in seconds
#   emit/cat, verify/cat          wall-time ratios to cat
#   emit_us, verify_us            CPU µs per ticket: `perf stat -e task-clock` (all threads) ÷ tickets
#   emit_x2, verify_x2            wall time with --threads 1 ÷ wall time with --threads 2
#   emit_MB, verify_MB            peak resident memory (GNU time's %M)
# CPU time (task-clock) is the figure to compare on a shared machine; wall ratios need a quiet
# one (the load average is printed first). Needs perf (Debian: apt-get install linux-perf).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
shift || true
games=("$@")
[ ${#games[@]} -gt 0 ] || games=(ruche-or maxi-ruche-or annee-chance)
scaling=${SCALING:-1}
command -v perf >/dev/null || { echo "perf is missing: apt-get install -y linux-perf" >&2; exit 2; }
. benches/common.sh
# Runs a command, appends "wall_s peak_KB cpu_ms" to the file $1.
# Wall time is perf's "seconds time elapsed" (nanoseconds; GNU time's %e has hundredths, which
# is 3 % of a 0.3 s emit and a third of a 0.03 s cat).
measure() {
  local out=$1
  shift
  perf stat -e task-clock -o "$work/p" -- /usr/bin/time -f '%M' -o "$work/t" "$@" >/dev/null 2>"$work/err" \
    || { cat "$work/err" >&2; exit 2; }
  local cpu wall
  cpu=$(awk '$3 == "task-clock" {gsub(",", "", $1); print $1}' "$work/p")
  wall=$(awk '$3 == "time" && $4 == "elapsed" {print $1}' "$work/p")
  echo "$wall $(cat "$work/t") $cpu" >>"$out"
}
echo "$(nproc) cores; load average: $(cut -d' ' -f1-3 /proc/loadavg); $rounds rounds; $(basename "$bin") $("$bin" --version | cut -d' ' -f2)"
printf '%-14s %8s %7s %7s %6s %8s %10s %8s %10s %8s %9s %8s %9s\n' \
  game tickets emit_s verify_s cat_s emit/cat verify/cat emit_us verify_us emit_x2 verify_x2 emit_MB verify_MB
for game in "${games[@]}"; do
  case $game in
    ruche-or) price=2 ;;
    maxi-ruche-or) price=3 ;;
    annee-chance) price=3 ;;
    *) echo "unknown game $game" >&2; exit 2 ;;
  esac
  csv=emissions/$game/$price/e0001/block-00001.csv
  rm -f "$work"/{emit,cat,verify,emit1,verify1}
  emit=("$bin" emit --game "$game" --price "$price" --seed "$seed"
    --signing-key keys/signing-key.pem --force --quiet --threads)
  verify=("$bin" verify --quiet --public-key keys/public-key.pem "$csv" --threads)
  # Each emit makes a new block, as an emission does: replacing the last round's with --force
  # would add the file system's release of the old file (~50 ms for La ruche d'or here).
  for _ in $(seq "$rounds"); do
    rm -rf emissions/"$game"
    measure "$work/emit" "${emit[@]}" 2
    # emit writes around the page cache (O_DIRECT): read the block once, unmeasured, so that
    # cat and verify read it from memory, as they did when emit left it in the cache.
    cat "$csv" >/dev/null
    measure "$work/cat" sh -c "cat $csv > copy.csv"
    rm -f copy.csv
    measure "$work/verify" "${verify[@]}" 2
    if [ "$scaling" = 1 ]; then
      rm -rf emissions/"$game"
      measure "$work/emit1" "${emit[@]}" 1
      cat "$csv" >/dev/null
      measure "$work/verify1" "${verify[@]}" 1
    fi
  done
  tickets=$(grep -c '' "$csv")
  tickets=$((tickets - 1))
  e=$(col "$work/emit" 1) em=$(col "$work/emit" 2) ec=$(col "$work/emit" 3)
  v=$(col "$work/verify" 1) vm=$(col "$work/verify" 2) vc=$(col "$work/verify" 3)
  c=$(col "$work/cat" 1)
  e1=nan v1=nan
  if [ "$scaling" = 1 ]; then e1=$(col "$work/emit1" 1) v1=$(col "$work/verify1" 1); fi
  awk -v g="$game" -v n="$tickets" -v e="$e" -v em="$em" -v ec="$ec" -v v="$v" -v vm="$vm" \
    -v vc="$vc" -v c="$c" -v e1="$e1" -v v1="$v1" 'BEGIN {
      cc = (c > 0.0005) ? c : 0.0005  # no ratio to zero
      x2e = (e1 == "nan") ? "-" : sprintf("%.2f", e1 / e)
      x2v = (v1 == "nan") ? "-" : sprintf("%.2f", v1 / v)
      printf "%-14s %8d %7.3f %7.3f %6.3f %8.1f %10.1f %8.2f %10.2f %8s %9s %8.1f %9.1f\n",
        g, n, e, v, c, e / cc, v / cc, ec * 1000 / n, vc * 1000 / n, x2e, x2v, em / 1024, vm / 1024 }'
  rm -rf emissions/"$game"
done
