#!/usr/bin/env bash
# Speed of `load` against the floor the issue sets: psql's `\copy tickets_plain FROM block.csv
# CSV HEADER` of the same file into an unindexed table of the CSV's columns, on the same
# throw-away cluster (tests/pg/start.sh, default durability: fsync on). One block per game, a
# fresh database for every run, median of RUNS runs (default 3).
# Usage: benches/load.sh [RUNS] [GAME...]   (games: ruche-or maxi-ruche-or annee-chance)
# Prints per game: \copy seconds, load seconds, their ratio (of the medians, and the median of
# each run's own ratio, steadier on a busy machine), load tickets/s, the split of the
# load (COPY; index and attach; read-back; waiting for the verification after the read-back;
# commit; and the verification, on its own thread beside all of them), load's peak memory and
# the load average when the game's runs began (the machine is shared: figures vary).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
shift || true
games=("$@")
[ ${#games[@]} -eq 0 ] && games=(ruche-or maxi-ruche-or annee-chance)
cargo build --release --quiet
root=$PWD
bin=$root/target/release/emission-factory
pg_env=$(tests/pg/start.sh)
eval "$pg_env"
work=$(mktemp -d)
trap '"$root/tests/pg/stop.sh" "$PG_TEST_DIR"; rm -rf "$work"' EXIT
chmod 755 "$work"
cd "$work"
"$bin" keygen --out keys >/dev/null
seed=$(printf 'cd%.0s' $(seq 32))
db_url() { echo "${DATABASE_URL/\/postgres\?/\/$1?}"; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '%-14s %9s %7s %7s %5s %9s %9s %6s %6s %6s %6s %6s %6s %7s %s\n' game tickets copy_s load_s ratio run_ratio tickets/s COPY_s index read wait commit verify peak_MB load_avg
for game in "${games[@]}"; do
  case $game in
    ruche-or) price=2 ;;
    *) price=3 ;;
  esac
  "$bin" emit --game "$game" --price "$price" --seed "$seed" --signing-key keys/signing-key.pem \
    --out em --quiet >/dev/null 2>&1
  csv=$work/em/$game/$price/e0001/block-00001.csv
  tickets=$(( $(wc -l <"$csv") - 1 ))
  : >copy.t; : >load.t; : >split.t; : >ratio.t
  load_avg=$(cut -d' ' -f1 /proc/loadavg)
  for run in $(seq "$runs"); do
    psql -q "$DATABASE_URL" -c "CREATE DATABASE floor_$run" -c "CREATE DATABASE load_$run"
    psql -q "$(db_url floor_$run)" \
      -c "CREATE TABLE tickets_plain (serial text, prize numeric, layout text, sha256 text)"
    /usr/bin/time -f '%e' -o t psql -q "$(db_url floor_$run)" \
      -c "\\copy tickets_plain FROM '$csv' CSV HEADER"
    cat t >>copy.t
    /usr/bin/time -f '%e %M' -o t "$bin" load --database-url "$(db_url load_$run)" \
      --public-key keys/public-key.pem --allow-test -q "$csv" >out
    cat t >>load.t
    echo "$(tail -1 copy.t) $(tail -1 load.t)" | awk '{print $2 / $1}' >>ratio.t
    # "LOADED ... (N tickets in T s, R tickets/s: COPY C s, index and attach A s, read-back B s,
    #  waiting for the verification W s, commit K s; verification V s beside them)"
    sed -nE 's/.*COPY ([0-9.]+) s, index and attach ([0-9.]+) s, read-back ([0-9.]+) s, waiting for the verification ([0-9.]+) s, commit ([0-9.]+) s; verification ([0-9.]+) s.*/\1 \2 \3 \4 \5 \6/p' out >>split.t
    psql -q "$DATABASE_URL" -c "DROP DATABASE floor_$run" -c "DROP DATABASE load_$run"
  done
  c=$(median <copy.t)
  l=$(cut -d' ' -f1 load.t | median); m=$(cut -d' ' -f2 load.t | median)
  col() { cut -d' ' -f"$1" split.t | median; }
  awk -v g="$game" -v n="$tickets" -v c="$c" -v l="$l" -v m="$m" -v k="$(col 1)" -v a="$(col 2)" \
    -v r="$(col 3)" -v w="$(col 4)" -v o="$(col 5)" -v v="$(col 6)" -v la="$load_avg" -v rr="$(median <ratio.t)" 'BEGIN {
    printf "%-14s %9d %7.2f %7.2f %5.2f %9.2f %9.0f %6.2f %6.2f %6.2f %6.2f %6.2f %6.2f %7.1f %s\n", g, n, c, l, l / c, rr, n / l, k, a, r, w, o, v, m / 1024, la }'
  rm -rf em
done
