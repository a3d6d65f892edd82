#!/usr/bin/env bash
# Speed of `load` against the floor the issue sets: psql's `\copy tickets_plain FROM block.csv
# CSV HEADER` of the same file into an unindexed table of the CSV's columns, on the same
# throw-away cluster (tests/pg/start.sh, default durability: fsync on). One block per game, a
# fresh database for every run, median of RUNS runs (default 3).
# Usage: benches/load.sh [RUNS] [GAME...]   (games: ruche-or maxi-ruche-or annee-chance)
# Prints per game: \copy seconds, load seconds, their ratio, load tickets/s, the split of the
# load (verification, on its own thread during the COPY; COPY; index and attach; read-back and
# commit) and load's peak memory.
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
printf '%-14s %9s %8s %8s %6s %10s %8s %8s %8s %8s %8s\n' game tickets copy_s load_s ratio tickets/s verify_s COPY_s attach_s check_s peak_MB
for game in "${games[@]}"; do
  case $game in
    ruche-or) price=2 ;;
    *) price=3 ;;
  esac
  "$bin" emit --game "$game" --price "$price" --seed "$seed" --signing-key keys/signing-key.pem \
    --out em --quiet >/dev/null 2>&1
  csv=$work/em/$game/$price/e0001/block-00001.csv
  tickets=$(( $(wc -l <"$csv") - 1 ))
  : >copy.t; : >load.t; : >split.t
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
    # "LOADED ... (N tickets in T s, R tickets/s; verify V s during COPY C s, index and attach A s, read-back and commit K s)"
    sed -nE 's/.*verify ([0-9.]+) s during COPY ([0-9.]+) s, index and attach ([0-9.]+) s, read-back and commit ([0-9.]+) s.*/\1 \2 \3 \4/p' out >>split.t
    psql -q "$DATABASE_URL" -c "DROP DATABASE floor_$run" -c "DROP DATABASE load_$run"
  done
  c=$(median <copy.t)
  l=$(cut -d' ' -f1 load.t | median); m=$(cut -d' ' -f2 load.t | median)
  v=$(cut -d' ' -f1 split.t | median); k=$(cut -d' ' -f2 split.t | median)
  a=$(cut -d' ' -f3 split.t | median); r=$(cut -d' ' -f4 split.t | median)
  awk -v g="$game" -v n="$tickets" -v c="$c" -v l="$l" -v m="$m" -v v="$v" -v k="$k" -v a="$a" -v r="$r" 'BEGIN {
    printf "%-14s %9d %8.2f %8.2f %6.2f %10.0f %8.2f %8.2f %8.2f %8.2f %8.1f\n", g, n, c, l, l / c, n / l, v, k, a, r, m / 1024 }'
  rm -rf em
done
