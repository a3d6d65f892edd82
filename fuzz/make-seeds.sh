#!/usr/bin/env bash
# Rebuilds the committed seed corpora of fuzz/seeds/ from real blocks: block 1 of emission 1 of
# each game with a fixed seed, then about 200 layouts per built-in game (up to 12 tickets of
# every prize, up to 100 losers), 60 whole ticket lines per game for csv_line (framed as that
# target reads them: checker byte, index as 4 bytes little-endian, line) and every manifest.
# Run from the repository's root after `cargo build --release`; the blocks (up to 1.5 GB) go
# to a scratch folder that is removed.
set -euo pipefail
bin=target/release/emission-factory
seed=00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
rm -rf fuzz/seeds
mkdir -p fuzz/seeds/manifest fuzz/seeds/csv_line
# game : stake : decoder target (- for none) : csv_line checker byte (see csv_line.rs)
for spec in tests/data/mini-ruche.toml:2:-:0 ruche-or:2:decode_ruche:3 \
    maxi-ruche-or:3:decode_maxi_ruche:5 annee-chance:3:decode_calendar:6; do
    IFS=: read -r game price target checker <<<"$spec"
    "$bin" emit --game "$game" --price "$price" --seed "$seed" --out "$scratch" -q >/dev/null
    id=$(basename "$game" .toml)
    dir=$scratch/$id/$price/e0001
    cp "$dir/block-00001.manifest.json" "fuzz/seeds/manifest/$id.json"
    # Fields: serial,prize,layout,sha256. The ticket index is the line number minus 2.
    head -n 400000 "$dir/block-00001.csv" | tail -n +2 | awk -F, '
        { seen[$2]++ }
        ($2 != "0" && seen[$2] <= 12) || ($2 == "0" && seen[$2] <= 100) { print NR - 1 "\t" $0; n++ }
        n >= 200 { exit }' > "$scratch/picked"
    if [ "$target" != - ]; then
        mkdir -p "fuzz/seeds/$target"
        awk -F'\t' -v out="fuzz/seeds/$target" '{
            split($2, f, ","); file = out "/" sprintf("%03d", NR)
            printf "%s", f[3] > file; close(file) }' "$scratch/picked"
    fi
    awk 'NR % 3 == 1' "$scratch/picked" | head -n 60 | ID=$id CHECKER=$checker perl -ne '
        chomp; my ($index, $line) = split /\t/;
        open my $f, ">", sprintf("fuzz/seeds/csv_line/%s-%07d", $ENV{ID}, $index) or die $!;
        print $f pack("CV", $ENV{CHECKER}, $index), $line;'
    rm -rf "${scratch:?}/$id"
done
