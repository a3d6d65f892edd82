#!/usr/bin/env bash
# The prize-order generator's raw output (`lab raw`) through Debian's dieharder, on a small
# sample and a few tests: a bounded check (about a minute) that the stream the shuffle draws
# from looks uniform to a standard battery. The full battery (`dieharder -a`) is a separate,
# long run; docs/RANDOMNESS.md records one.
#
# Usage: benches/dieharder.sh [MEGABYTES]   (default 4096: at most that much per test; each test
#   reads what it needs from a pipe, never rewound, then closes it, and lab raw stops quietly)
#   BIN=path/to/emission-factory  tests that binary instead of building this tree's.
#   SEED=64 hex digits            the test emission's seed (default: a fixed one)
# Exits 1 if dieharder says FAILED for any test (WEAK is printed, not failed: at the 0.5 %
# level, one test in two hundred is WEAK by chance).
set -euo pipefail
cd "$(dirname "$0")/.."
megabytes=${1:-4096}
command -v dieharder >/dev/null \
  || { echo "dieharder is not installed: apt-get install -y dieharder" >&2; exit 2; }
if [ -z "${BIN:-}" ]; then
  cargo build --release --quiet
  BIN=$PWD/target/release/emission-factory
fi
seed=${SEED:-$(printf 'cd%.0s' $(seq 32))}
bytes=$((megabytes * 1024 * 1024))
echo "dieharder on lab raw: ruche-or 2 €, emission 1, block 1, at most $megabytes MiB per test; $(date -u +%FT%TZ) on $(uname -n) ($(nproc) cores)"
# Tests that need little data: birthdays (0), 32x32 binary rank (2), count the ones (8),
# monobit (100), runs (101), bit distribution (200, 4 bits).
failed=0
for test in "-d 0" "-d 2" "-d 8" "-d 100" "-d 101" "-d 200 -n 4"; do
  # shellcheck disable=SC2086 # the options are words
  out=$("$BIN" lab raw --game ruche-or --price 2 --seed "$seed" --bytes "$bytes" \
    | dieharder -g 200 $test 2>&1 | grep -E '\|.*\|.*\|' | grep -v -e 'test_name' -e 'rng_name' -e 'stdin_input_raw' || true)
  echo "$out"
  grep -q FAILED <<<"$out" && failed=1
  [ -n "$out" ] || { echo "dieharder $test said nothing" >&2; failed=1; }
done
exit $failed
