#!/bin/sh
# Run the bats suites and end with one plain "N passed, N failed" line.
set -u
cd "$(dirname "$0")/.." || exit 1
out=$(mktemp)
rcfile=$(mktemp)
trap 'rm -f "$out" "$rcfile"' EXIT
set -- tests/bats/*.bats
[ -e "$1" ] || { echo "bats: no tests"; exit 1; }
{ bats --tap --timing "$@"; echo $? > "$rcfile"; } | tee "$out"
rc=$(cat "$rcfile")
pass=$(grep -c '^ok ' "$out")
fail=$(grep -c '^not ok ' "$out")
echo "bats: $pass passed, $fail failed"
[ "$rc" -eq 0 ] && [ "$fail" -eq 0 ]
