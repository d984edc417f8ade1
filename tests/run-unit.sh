#!/bin/sh
# Run cmocka unit-test binaries; fail if any fails.
set -u
rc=0
for t in "$@"; do
	"$t" || { echo "FAILED: $t" >&2; rc=1; }
done
exit $rc
