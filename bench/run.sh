#!/bin/sh
# make bench [SCENARIO=name]: run one scenario or all of them, in one run so
# that klog's figures sit beside the machine's own limits.  Never part of
# make check: figures need a quiet machine.
set -eu
cd "$(dirname "$0")/.."
B=build/bench
scenario=${1:-all}

say() { printf '\n== %s\n' "$*"; }

sys() {
	say "machine limits"
	$B/bench_sys loopback 1024 | tail -n 1
	$B/bench_sys pagecache 1024 | tail -n 1
}

append() {
	say "append: 200-byte messages in sets of 50 vs plain write()"
	$B/bench_append 1G | tail -n 1
}

iter() {
	say "iterate with CRC checks, 200-byte messages"
	$B/bench_iter 256M | tail -n 1
}

run_one() {
	case "$1" in
	sys|append|iter) "$1" ;;
	*)
		if [ -x "bench/$1.sh" ]; then "bench/$1.sh"
		else echo "make bench: unknown scenario '$1'" >&2; exit 64; fi ;;
	esac
}

echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(nproc) cores, $(uname -r)"
if [ "$scenario" = all ]; then
	for s in sys append iter; do run_one "$s"; done
	for f in bench/*.sh; do
		name=${f##*/}; name=${name%.sh}
		[ "$name" = run ] || run_one "$name"
	done
else
	run_one "$scenario"
fi
