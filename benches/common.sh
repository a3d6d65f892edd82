# Shared by benches/end_to_end.sh and benches/report.sh (sourced from the repository's root,
# after `games` is set): builds this tree unless BIN is given, makes a scratch folder (removed
# on exit) with a test key, and defines `median` and `col`. Sets bin, work and seed, and leaves
# the shell in $work.
if [ -z "${BIN:-}" ]; then
  cargo build --release --quiet
  BIN=$PWD/target/release/emission-factory
fi
bin=$(realpath "$BIN")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$bin" keygen --out keys >/dev/null
seed=$(printf 'cd%.0s' $(seq 32))
# The median of the numbers on standard input, one per line ("nan" if none).
median() { sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "nan"}'; }
# The median of column $2 of the file $1.
col() { cut -d' ' -f"$2" "$1" | median; }
