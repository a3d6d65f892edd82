#!/usr/bin/env bash
# The sale path at peak (issue 22): pgbench's transactions per second of
#   sales    SELECT * FROM sell_next_ticket(E)     as a login role member of ef_seller
#   inserts  INSERT INTO durable_inserts VALUES (1) the same database's one-row durable INSERT
# at 1, 16 and 64 clients, on one throw-away cluster with the server's default durability
# (fsync on, synchronous_commit on: every sale is flushed to the WAL before it is reported),
# in the same run. One block of La ruche d'or at 2 € (900 000 tickets) is loaded first.
# Each round runs, for each client count, inserts then sales for SECONDS seconds; the figures
# are the medians over ROUNDS rounds (default 5), with pgbench's average latency.
# OTHER_BLOCKS=N loads, beside it, an emission of N blocks of the test game (tests/data/
# mini-ruche.toml, 2 000 tickets each): a database that holds other blocks (a partition of
# `tickets` each), as a game server's does; BIN=path times a given build.
# Usage: [OTHER_BLOCKS=N] [BIN=path] benches/sales.sh [ROUNDS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
seconds=${2:-5}
root=$PWD
if [ -z "${BIN:-}" ]; then
  cargo build --profile ci --quiet
  BIN=$root/target/ci/emission-factory
fi
bin=$(realpath "$BIN")
other=${OTHER_BLOCKS:-0}
pg_env=$(tests/pg/start.sh)
eval "$pg_env"
work=$(mktemp -d)
trap '"$root/tests/pg/stop.sh" "$PG_TEST_DIR"; rm -rf "$work"' EXIT
chmod 755 "$work"
cd "$work"
"$bin" keygen --out keys >/dev/null
seed=$(printf 'cd%.0s' $(seq 32))
"$bin" emit --game ruche-or --price 2 --seed "$seed" --signing-key keys/signing-key.pem \
  --out em --quiet >/dev/null 2>&1
db_url() { echo "${DATABASE_URL/\/postgres\?/\/$1?}"; }
psql -q "$DATABASE_URL" -c "CREATE DATABASE sales"
url=$(db_url sales)
"$bin" load --database-url "$url" --public-key keys/public-key.pem --allow-test -q em >/dev/null
if [ "$other" -gt 0 ]; then
  "$bin" emit --game "$root/tests/data/mini-ruche.toml" --blocks "$other" --seed "$seed" \
    --signing-key keys/signing-key.pem --out other --quiet >/dev/null 2>&1
  "$bin" load --database-url "$url" --public-key keys/public-key.pem --allow-test -q \
    --game "$root/tests/data/mini-ruche.toml" other >/dev/null
fi
psql -q "$url" -c "CREATE ROLE bench_seller LOGIN IN ROLE ef_seller" \
  -c "CREATE TABLE durable_inserts (n integer)" \
  -c "GRANT INSERT ON durable_inserts TO bench_seller"
seller_url=${url/postgres@/bench_seller@}
emission=$(psql -qtA "$seller_url" -c "SELECT emission_id FROM emissions WHERE game = 'ruche-or'")
echo "SELECT * FROM sell_next_ticket($emission);" >sale.sql
echo "INSERT INTO durable_inserts VALUES (1);" >insert.sql
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
run() { # script clients -> "tps latency_ms"
  local jobs=$(( $2 < 2 ? 1 : 2 ))
  pgbench -n -c "$2" -j "$jobs" -T "$seconds" -f "$1" "$seller_url" 2>/dev/null |
    awk '/^latency average/ {l=$4} /^tps/ {t=$3} END {print t, l}'
}
load_avg=$(cut -d' ' -f1 /proc/loadavg)
for round in $(seq "$rounds"); do
  for clients in 1 16 64; do
    echo "$clients $(run insert.sql "$clients")" >>inserts.t
    echo "$clients $(run sale.sql "$clients")" >>sales.t
  done
done
sold=$(psql -qtA "$url" -c "SELECT sold FROM emission_reconciliation WHERE emission_id = $emission")
printf '%-8s %12s %12s %12s %12s %9s\n' clients sales/s sale_ms inserts/s insert_ms ratio
for clients in 1 16 64; do
  s=$(awk -v c="$clients" '$1 == c {print $2}' sales.t | median)
  sl=$(awk -v c="$clients" '$1 == c {print $3}' sales.t | median)
  i=$(awk -v c="$clients" '$1 == c {print $2}' inserts.t | median)
  il=$(awk -v c="$clients" '$1 == c {print $3}' inserts.t | median)
  awk -v c="$clients" -v s="$s" -v sl="$sl" -v i="$i" -v il="$il" 'BEGIN {
    printf "%-8s %12.0f %12.2f %12.0f %12.2f %9.2f\n", c, s, sl, i, il, s / i }'
done
echo "rounds $rounds x ${seconds} s; $other other blocks; tickets sold $sold; load average at the start $load_avg, at the end $(cut -d' ' -f1 /proc/loadavg); $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p')"
