#!/usr/bin/env bash
# End-to-end speed of emit and verify against `cat` copying the same output, one block per
# game, median of RUNS runs. Usage: benches/end_to_end.sh [RUNS] (default 3).
# Prints, per game: emit and verify wall time and peak memory, cat time, and emit/cat ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
cargo build --release --quiet
bin=$PWD/target/release/emission-factory
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$bin" keygen --out keys >/dev/null
seed=$(printf 'cd%.0s' $(seq 32))
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
measure() { # prints "seconds KB" of a command
  /usr/bin/time -f '%e %M' -o "$work/t" "$@" >/dev/null 2>&1
  cat "$work/t"
}
printf '%-16s %9s %9s %10s %8s %9s %9s %10s %8s\n' game tickets emit_s tickets/s emit_MB cat_s ratio verify_s ver_MB
for spec in "ruche-or 2 900000" "maxi-ruche-or 3 7500000" "annee-chance 3 2000000"; do
  set -- $spec
  game=$1 price=$2 tickets=$3
  csv=emissions/$game/$price/e0001/block-00001.csv
  : >"$work/emit" ; : >"$work/cat" ; : >"$work/verify"
  for _ in $(seq "$runs"); do
    measure "$bin" emit --game "$game" --price "$price" --seed "$seed" \
      --signing-key keys/signing-key.pem --force --quiet >>"$work/emit"
    measure sh -c "cat $csv > copy.csv" >>"$work/cat"
    rm -f copy.csv
    measure "$bin" verify --quiet --public-key keys/public-key.pem "$csv" >>"$work/verify"
  done
  e=$(cut -d' ' -f1 "$work/emit" | median); em=$(cut -d' ' -f2 "$work/emit" | median)
  c=$(cut -d' ' -f1 "$work/cat" | median)
  v=$(cut -d' ' -f1 "$work/verify" | median); vm=$(cut -d' ' -f2 "$work/verify" | median)
  awk -v g="$game" -v n="$tickets" -v e="$e" -v em="$em" -v c="$c" -v v="$v" -v vm="$vm" 'BEGIN {
    printf "%-16s %9d %9.2f %10.0f %8.1f %9.2f %9.1f %10.2f %8.1f\n", g, n, e, n / e, em / 1024, c, e / c, v, vm / 1024 }'
  rm -rf emissions/"$game"
done
