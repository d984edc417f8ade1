#!/bin/sh
# Run cmocka unit-test binaries; fail if any fails.  Each program's output
# is printed whole once it ends, so that make check's two suites (plain and
# ASan), run side by side, do not interleave their lines.
set -u
rc=0
out=$(mktemp "${TMPDIR:-/tmp}/klog-unit.XXXXXX") || exit 1
trap 'rm -f "$out"' EXIT
for t in "$@"; do
	"$t" >"$out" 2>&1
	st=$?
	cat "$out"
	[ "$st" -eq 0 ] || { echo "FAILED: $t" >&2; rc=1; }
done
exit $rc
