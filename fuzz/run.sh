#!/usr/bin/env bash
# fuzz/run.sh [SECONDS] [TARGET...]: builds the fuzz targets on the stable toolchain and runs
# each for SECONDS (default 20) with libFuzzer, from its committed seeds (fuzz/seeds/<target>)
# and what earlier runs kept (fuzz/corpus/<target>, not committed). Exits 1 if any target
# found an input that breaks its properties; the input is in fuzz/artifacts/<target>/ and the
# target's log in fuzz/target/fuzz-logs/<target>.log (the target folder is $CARGO_TARGET_DIR
# when set, relative to fuzz/). .ci/run calls it (docs/ARCHITECTURE.md,
# "Fuzzing").
#
# cargo-fuzz would need nightly for its -Z flags; libfuzzer-sys itself builds on stable, and
# the coverage instrumentation libFuzzer is guided by is stable rustc's: the sanitizer-coverage
# pass and its LLVM options, the flags cargo-fuzz gives (without a sanitizer: AddressSanitizer
# needs -Zsanitizer, and the code fuzzed here has no unsafe). --target keeps the flags off the
# build scripts and proc macros, which would not link with them.
set -euo pipefail
seconds=${1:-20}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(decode_ruche decode_maxi_ruche decode_calendar manifest csv_line pack_lines)
case $seconds in
  '' | *[!0-9]*) echo "fuzz/run.sh: SECONDS must be a whole number, not '$seconds'" >&2; exit 2 ;;
esac
cd "$(dirname "$0")"
host=$(rustc -vV | sed -n 's/^host: //p')
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
start=$(date +%s)
cargo build --release --locked --target "$host" --bins
built=$(date +%s)
echo "fuzz: targets built in $((built - start)) s"
out=${CARGO_TARGET_DIR:-target}
bin=$out/$host/release
mkdir -p "$out/fuzz-logs"
failed=()
for t in "${targets[@]}"; do
  [ -x "$bin/$t" ] || { echo "fuzz/run.sh: no target $t (see fuzz/Cargo.toml)" >&2; exit 2; }
  mkdir -p "corpus/$t" "artifacts/$t"
  log=$out/fuzz-logs/$t.log
  # One process (no -jobs), inputs up to 4 KiB (a layout or line is well below), 10 s per
  # input at most, 2 GiB of memory at most.
  if "$bin/$t" "corpus/$t" "seeds/$t" -max_total_time="$seconds" -max_len=4096 -timeout=10 \
      -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="artifacts/$t/" >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "fuzz: $t: ${runs:-?} inputs in ${seconds} s, no failure ($(find "corpus/$t" -type f | wc -l) inputs kept)"
  else
    failed+=("$t")
    echo "fuzz: $t FAILED: the input is in fuzz/artifacts/$t/, the log in $log; its end:" >&2
    grep -v '^#[0-9]' "$log" | tail -n 30 >&2
  fi
done
echo "fuzz: ${#targets[@]} targets run in $(($(date +%s) - built)) s"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: failed: ${failed[*]}. Replay one input (from fuzz/): $bin/<target> artifacts/<target>/<file>" >&2
  exit 1
fi
