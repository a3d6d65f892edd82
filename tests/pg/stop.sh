#!/usr/bin/env bash
# Stops a cluster started by tests/pg/start.sh and removes its folder.
#   tests/pg/stop.sh "$PG_TEST_DIR"
set -uo pipefail
dir="${1:-${PG_TEST_DIR:-}}"
case "$dir" in
  /tmp/emission-factory-pg.*) ;;
  *) echo "stop.sh: give the folder start.sh printed (PG_TEST_DIR)" >&2; exit 2 ;;
esac
bin=""
for d in /usr/lib/postgresql/*/bin; do
  [ -x "$d/pg_ctl" ] && bin="$d"
done
if [ -d "$dir/data" ] && [ -n "$bin" ]; then
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1
  else
    "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1
  fi
fi
rm -rf "$dir"
