#!/usr/bin/env bash
# Speed of `db-verify` against `verify` of the same block's file (issue 22 item 2: db-verify at
# >= 0.7 x the speed of verify). One La ruche d'or 2 EUR block (900 000 tickets) is emitted and
# loaded into a throw-away cluster (tests/pg/start.sh, default durability), then each round
# runs `verify` of the block's CSV and `db-verify` of its emission one after the other (the
# file is in the page cache after the first round, the table in the server's buffers and the
# page cache). Median of ROUNDS rounds (default 5), one run.
# Usage: benches/db_verify.sh [ROUNDS]      BIN=path/to/emission-factory to time a given build
# Prints the medians, the speed ratio verify_s / db_verify_s (>= 0.7 is the aim), the median
# of each round's own ratio, and the load average before and after (the machine is shared).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
root=$PWD
if [ -z "${BIN:-}" ]; then
  cargo build --profile ci --quiet
  BIN=$root/target/ci/emission-factory
fi
bin=$(realpath "$BIN")
pg_env=$(tests/pg/start.sh)
eval "$pg_env"
work=$(mktemp -d)
trap '"$root/tests/pg/stop.sh" "$PG_TEST_DIR"; rm -rf "$work"' EXIT
chmod 755 "$work"
cd "$work"
"$bin" keygen --out keys >/dev/null
seed=$(printf 'cd%.0s' $(seq 32))
median() { sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "nan"}'; }
"$bin" emit --game ruche-or --price 2 --blocks 1 --seed "$seed" --signing-key keys/signing-key.pem \
  --out em --quiet >/dev/null 2>&1
csv=$work/em/ruche-or/2/e0001/block-00001.csv
tickets=$(( $(wc -l <"$csv") - 1 ))
"$bin" load --database-url "$DATABASE_URL" --public-key keys/public-key.pem --allow-test -q "$csv" >/dev/null
psql -q "$DATABASE_URL" -c "VACUUM ANALYZE"
# A round not counted: emit writes around the page cache, so the first verify would read the
# file from the disk while db-verify reads the server's cache.
"$bin" verify --quiet --public-key keys/public-key.pem "$csv" >/dev/null
"$bin" db-verify --quiet --database-url "$DATABASE_URL" --public-key keys/public-key.pem \
  ruche-or/2/e0001 >/dev/null
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
: >v.t; : >d.t; : >r.t
for _ in $(seq "$rounds"); do
  /usr/bin/time -f '%e' -o t "$bin" verify --quiet --public-key keys/public-key.pem "$csv" >/dev/null
  cat t >>v.t
  /usr/bin/time -f '%e' -o t "$bin" db-verify --quiet --database-url "$DATABASE_URL" \
    --public-key keys/public-key.pem ruche-or/2/e0001 >/dev/null
  cat t >>d.t
  echo "$(tail -1 v.t) $(tail -1 d.t)" | awk '{print $1 / $2}' >>r.t
done
# The server's COPY of the rows alone (to /dev/null), for the floor.
/usr/bin/time -f '%e' -o t psql -q "$DATABASE_URL" \
  -c "COPY (SELECT idx, serial, prize_cents, layout, sha256 FROM tickets) TO STDOUT (FORMAT binary)" >/dev/null
copy_s=$(cat t)
v=$(median <v.t) d=$(median <d.t)
echo "$(nproc) cores; $tickets tickets; $rounds rounds; load average before $load_before, after $(cut -d' ' -f1-3 /proc/loadavg)"
echo "verify runs: $(tr '\n' ' ' <v.t)"
echo "db-verify runs: $(tr '\n' ' ' <d.t)"
awk -v v="$v" -v d="$d" -v rr="$(median <r.t)" -v c="$copy_s" 'BEGIN {
  printf "verify %.2f s, db-verify %.2f s: db-verify at %.2f x the speed of verify (median of the rounds own ratios %.2f); psql COPY of the rows alone %.2f s\n", v, d, v / d, rr, c }'
