#!/bin/sh
# Run the bats suites and end with one plain "N passed, N failed" line.
# Two files at a time (BATS_JOBS; GNU parallel runs them), each file's
# tests in order: most of the suite waits on processes, timeouts and
# ZooKeeper rather than on a core, so this halves its time on two cores.
set -u
cd "$(dirname "$0")/.." || exit 1
out=$(mktemp)
rcfile=$(mktemp)
trap 'rm -f "$out" "$rcfile"' EXIT
set -- tests/bats/*.bats
[ -e "$1" ] || { echo "bats: no tests"; exit 1; }
jobs=${BATS_JOBS:-2}
if [ "$jobs" -gt 1 ] && command -v parallel >/dev/null 2>&1; then
	set -- --jobs "$jobs" --no-parallelize-within-files "$@"
fi
{ bats --tap --timing "$@"; echo $? > "$rcfile"; } | tee "$out"
rc=$(cat "$rcfile")
pass=$(grep -c '^ok ' "$out")
fail=$(grep -c '^not ok ' "$out")
echo "bats: $pass passed, $fail failed"
[ "$rc" -eq 0 ] && [ "$fail" -eq 0 ]
