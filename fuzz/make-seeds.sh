#!/usr/bin/env bash
# Rebuilds the committed seed corpora of fuzz/seeds/ from real blocks: one block of each
# built-in game with a fixed seed, then about 200 layouts per game (up to 12 tickets of every
# prize, up to 100 losers) and the block's manifest. Run from the repository's root after
# `cargo build --release`; it writes blocks of up to 1.5 GB under a scratch folder it removes.
set -euo pipefail
bin=target/release/emission-factory
seed=00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
rm -rf fuzz/seeds
mkdir -p fuzz/seeds/manifest
for spec in decode_ruche:ruche-or:2 decode_maxi_ruche:maxi-ruche-or:3 decode_calendar:annee-chance:3; do
    IFS=: read -r target game price <<<"$spec"
    "$bin" emit --game "$game" --price "$price" --seed "$seed" --out "$scratch" -q
    dir=$scratch/$game/$price/e0001
    mkdir -p "fuzz/seeds/$target"
    # Fields: serial,prize,layout,sha256; the first 12 of every prize, then losers up to 200.
    head -n 400000 "$dir/block-00001.csv" | tail -n +2 | awk -F, -v out="fuzz/seeds/$target" '
        { seen[$2]++ }
        ($2 != "0" && seen[$2] <= 12) || ($2 == "0" && seen[$2] <= 100) {
            n++; printf "%s", $3 > (out "/" sprintf("%03d", n)); close(out "/" sprintf("%03d", n))
        }
        n >= 200 { exit }'
    cp "$dir/block-00001.manifest.json" "fuzz/seeds/manifest/$game.json"
    rm -rf "${scratch:?}/$game"
done
