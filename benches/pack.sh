#!/usr/bin/env bash
# `pack` and `unpack` on one sealed block per game (issue 24: the pack ≤ 0.45 × the folder).
#
# Usage: benches/pack.sh [ROUNDS] [GAME...]   (default 5 rounds, ruche-or and maxi-ruche-or)
#   BIN=path/to/emission-factory  measures that binary instead of building this tree's.
#   LEVEL=N                       the zstd level given to pack (default: pack's own, 3).
#
# Per game: one sealed emission of one block (emit --emission-blocks 1), read once unmeasured
# so that every round reads it from memory. A round runs, each once:
#   verify   verify --threads 2 of the folder (the reference)
#   pack     pack --out (zstd with 2 threads, age to one recipient)
#   open     age -d -i KEY PACK | zstd -d > /dev/null with the real tools: what decrypting and
#            decompressing the stream costs a reader of the pack
#   unpack   unpack --out (the folder restored, then removed)
#   vpack    verify --threads 2 --identity KEY of the pack, as it streams (issue 24: ≤ 1.3 ×
#            verify of the folder); its peak RSS (GNU time's %M) printed beside verify's
# Printed, medians of the rounds: wall seconds (GNU time's %e; `open`: bash's time of the
# pipeline), CPU seconds (user + sys) of pack and unpack, x = ÷ verify's wall time; the folder's
# and the pack's bytes and their ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
shift || true
games=("$@")
[ ${#games[@]} -gt 0 ] || games=(ruche-or maxi-ruche-or)
. benches/common.sh
level=()
[ -z "${LEVEL:-}" ] || level=(--level "$LEVEL")
measure() {
  local out=$1
  shift
  /usr/bin/time -f '%e %U %S %M' -o "$work/t" "$@" >/dev/null 2>"$work/err" \
    || { cat "$work/err" >&2; exit 2; }
  awk '{print $1, $2 + $3, $4}' "$work/t" >>"$out"
}
age-keygen -o id.txt 2>/dev/null
recipient=$(age-keygen -y id.txt)
echo "$(nproc) cores; $(lscpu | sed -n 's/^Model name: *//p'); load average: $(cut -d' ' -f1-3 /proc/loadavg); $rounds rounds; $(basename "$bin") $("$bin" --version | cut -d' ' -f2)"
printf '%-14s %8s %8s %6s %8s %6s %8s %6s %8s %6s %8s %8s %8s %8s %13s %12s %6s\n' \
  game verify_s pack_s x open_s x unpack_s x vpack_s x v_rss_kB vp_rss_kB pack_cpu unp_cpu folder_B pack_B ratio
for game in "${games[@]}"; do
  case $game in
    ruche-or) price=2 ;;
    maxi-ruche-or) price=3 ;;
    annee-chance) price=3 ;;
    *) echo "unknown game $game" >&2; exit 2 ;;
  esac
  folder=emissions/$game/$price/e0001
  "$bin" emit --game "$game" --price "$price" --seed "$seed" --signing-key keys/signing-key.pem \
    --emission-blocks 1 --quiet --threads 2 >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 2; }
  cat "$folder"/block-*.csv >/dev/null
  rm -f "$work"/{verify,pack,open,unpack,vpack}
  for _ in $(seq "$rounds"); do
    measure "$work/verify" "$bin" verify --quiet --public-key keys/public-key.pem --threads 2 "$folder"
    rm -f e.pack
    measure "$work/pack" "$bin" pack --quiet --recipient "$recipient" --threads 2 "${level[@]}" --out e.pack "$folder"
    start=$(date +%s.%N)
    age -d -i id.txt e.pack | zstd -d -q >/dev/null
    echo "$(echo "$(date +%s.%N) - $start" | bc) 0 0" >>"$work/open"
    rm -rf restored && mkdir restored
    measure "$work/unpack" "$bin" unpack --quiet --identity id.txt --out restored e.pack
    cmp "$folder/block-00001.csv" "restored/$game/$price/e0001/block-00001.csv"
    measure "$work/vpack" "$bin" verify --quiet --public-key keys/public-key.pem --threads 2 --identity id.txt e.pack
  done
  fb=$(find "$folder" -maxdepth 1 -type f ! -name '.*' -printf '%s\n' | awk '{s += $1} END {print s}')
  pb=$(stat -c %s e.pack)
  v=$(col "$work/verify" 1) p=$(col "$work/pack" 1) pc=$(col "$work/pack" 2)
  o=$(col "$work/open" 1) u=$(col "$work/unpack" 1) uc=$(col "$work/unpack" 2)
  vp=$(col "$work/vpack" 1) vm=$(col "$work/verify" 3) vpm=$(col "$work/vpack" 3)
  awk -v g="$game" -v v="$v" -v p="$p" -v pc="$pc" -v o="$o" -v u="$u" -v uc="$uc" -v fb="$fb" -v pb="$pb" \
      -v vp="$vp" -v vm="$vm" -v vpm="$vpm" 'BEGIN {
      printf "%-14s %8.2f %8.2f %6.2f %8.2f %6.2f %8.2f %6.2f %8.2f %6.2f %8d %8d %8.2f %6.2f %13d %12d %6.3f\n",
        g, v, p, p / v, o, o / v, u, u / v, vp, vp / v, vm, vpm, pc, uc, fb, pb, pb / fb }'
  rm -rf emissions/"$game" restored e.pack
done
