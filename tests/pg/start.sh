#!/usr/bin/env bash
# Starts a throw-away PostgreSQL cluster for the tests and benchmarks, and prints the shell
# lines that point at it:
#
#   eval "$(tests/pg/start.sh [--fast] [--tls CERTDIR])"     # sets DATABASE_URL and PG_TEST_DIR
#   ...
#   tests/pg/stop.sh "$PG_TEST_DIR"
#
# The cluster lives in a fresh temporary folder owned by the `postgres` user (initdb refuses to
# run as root), listens on a Unix socket in that folder only (no TCP port), and trusts local
# connections: it is for tests, never for data. --fast turns fsync and synchronous commit off
# (the tests do not crash the server; the benchmarks run without it). --tls CERTDIR also listens
# on TCP at 127.0.0.1 and 127.0.0.2 with ssl = on, the certificate CERTDIR/server.crt and its key
# CERTDIR/server.key, logging every connection (server.log), and prints PG_TEST_PORT.
set -euo pipefail

fast=0
tls=""
while [ $# -gt 0 ]; do
  case "$1" in
    --fast) fast=1 ;;
    --tls) tls="$2"; shift ;;
    *) echo "start.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

bin=""
for d in /usr/lib/postgresql/*/bin; do
  [ -x "$d/initdb" ] && bin="$d"
done
if [ -z "$bin" ]; then
  echo "start.sh: PostgreSQL is not installed (apt-get install -y postgresql)" >&2
  exit 2
fi

dir=$(mktemp -d /tmp/emission-factory-pg.XXXXXXXX)
chmod 755 "$dir"
as_postgres=()
if [ "$(id -u)" = 0 ]; then
  id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
  chown postgres "$dir"
  as_postgres=(runuser -u postgres --)
fi
"${as_postgres[@]}" "$bin/initdb" -D "$dir/data" -U postgres --auth=trust \
  --encoding=UTF8 --locale=C >"$dir/initdb.log" 2>&1 || {
  cat "$dir/initdb.log" >&2
  exit 2
}
# A port number still names the socket file; pick one no other cluster here uses.
port=$(( 20000 + RANDOM % 20000 ))
{
  echo "listen_addresses = ''"
  echo "unix_socket_directories = '$dir'"
  echo "port = $port"
  echo "max_connections = 100"
  if [ -n "$tls" ]; then
    echo "listen_addresses = '127.0.0.1,127.0.0.2'"
    echo "ssl = on"
    echo "ssl_cert_file = 'server.crt'"
    echo "ssl_key_file = 'server.key'"
    echo "log_connections = on"
  fi
  if [ "$fast" = 1 ]; then
    echo "fsync = off"
    echo "synchronous_commit = off"
    echo "full_page_writes = off"
  fi
} >>"$dir/data/postgresql.conf"
if [ -n "$tls" ]; then
  install -m 0644 "$tls/server.crt" "$dir/data/server.crt"
  install -m 0600 "$tls/server.key" "$dir/data/server.key"
  echo "host all all 127.0.0.2/32 trust" >>"$dir/data/pg_hba.conf"
  if [ "$(id -u)" = 0 ]; then
    chown postgres "$dir/data/server.crt" "$dir/data/server.key"
  fi
fi
"${as_postgres[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null || {
  cat "$dir/server.log" >&2
  exit 2
}
echo "export PG_TEST_DIR='$dir'"
echo "export PG_TEST_PORT='$port'"
echo "export DATABASE_URL='postgresql://postgres@/postgres?host=$dir&port=$port'"
