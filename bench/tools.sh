#!/bin/sh
# tools: the command-line tools end to end, on nginx access-log lines
# (bench_accesslog, fixed seed):
#   klog-produce -t T < file                          (target >= 1,000,000 lines/s)
#   klog-consume -t T -o beginning -e > /dev/null     (target >= 1,000,000 lines/s)
#   klog-produce -t K -K ' ' < file: the same lines as records keyed by the
#   client's address (magic-2 entries), beside the plain ones (issue 30:
#   at most 10% dearer, so keyed lines/s at least 0.9 of plain's; the
#   median of each run's own ratio)
#   klog-produce -t I --idempotent < file: the same lines from an
#   idempotent producer (magic-2 entries with a producer id), the same way
# timed from start to exit, each run on a fresh broker.  Knob: TOOLS_LINES
# (default 2000000, times BENCH_SCALE).
. "$(dirname "$0")/lib.sh"
bench_setup tools

lines=$(scaled "${TOOLS_LINES:-2000000}" 1000)
"$B/bench_accesslog" -n "$lines" >"$WORK/input"
size=$(wc -c <"$WORK/input")
note "$lines lines, $size bytes, $RUNS runs"

: >"$WORK/p"
: >"$WORK/k"
: >"$WORK/kr"
: >"$WORK/ir"
: >"$WORK/c"
: >"$WORK/pmb"
: >"$WORK/cmb"
# produce_timed TOPIC [options]: one klog-produce of the input, timed; the
# dirty pages an earlier run left are written back first, outside the
# timing, so that no run pays for the one before it (the keyed run, always
# after 430 MB of plain lines, measured 0.65x plain that way, and 0.9-1.1x
# with this).
produce_timed() {
	_t=$1
	shift
	sync
	_t0=$(now_s)
	"$ROOT/bin/klog-produce" -q -b "$BROKER" -t "$_t" "$@" <"$WORK/input"
	elapsed "$_t0" "$(now_s)"
}

i=1
while [ "$i" -le "$RUNS" ]; do
	broker_start "$WORK/data"
	# Plain, keyed and idempotent take turns going first.
	case $((i % 3)) in
	1)
		p=$(produce_timed t)
		k=$(produce_timed k -K ' ')
		d=$(produce_timed d --idempotent)
		;;
	2)
		k=$(produce_timed k -K ' ')
		d=$(produce_timed d --idempotent)
		p=$(produce_timed t)
		;;
	*)
		d=$(produce_timed d --idempotent)
		p=$(produce_timed t)
		k=$(produce_timed k -K ' ')
		;;
	esac
	sync
	t1=$(now_s)
	"$ROOT/bin/klog-consume" -v -b "$BROKER" -t t -o beginning -e \
		>/dev/null 2>"$WORK/consume.err"
	t2=$(now_s)
	broker_stop
	rm -rf "$WORK/data"
	got=$(awk '{ print $2 }' "$WORK/consume.err")
	[ "$got" = "$lines" ] || {
		echo "tools: klog-consume read $got of $lines lines" >&2
		cat "$WORK/consume.err" >&2
		exit 1
	}
	c=$(elapsed "$t1" "$t2")
	note "run $i: klog-produce $p s, keyed $k s, idempotent $d s," \
		"klog-consume $c s"
	ratio "$lines" "$p" 0 >>"$WORK/p"
	ratio "$lines" "$c" 0 >>"$WORK/c"
	ratio "$lines" "$k" 0 >>"$WORK/k"
	ratio "$p" "$k" >>"$WORK/kr"
	ratio "$p" "$d" >>"$WORK/ir"
	ratio "$size" "$p" 0 | awk '{ printf "%.1f\n", $1 / 1e6 }' >>"$WORK/pmb"
	ratio "$size" "$c" 0 | awk '{ printf "%.1f\n", $1 / 1e6 }' >>"$WORK/cmb"
	i=$((i + 1))
done
p=$(median <"$WORK/p")
c=$(median <"$WORK/c")
say tools_produce_lines_s "$p" lines/s
say tools_produce_mb_s "$(median <"$WORK/pmb")" MB/s
k=$(median <"$WORK/k")
say tools_produce_keyed_lines_s "$k" lines/s
kr=$(median <"$WORK/kr")
say tools_produce_keyed_of_plain "$kr" fraction
ir=$(median <"$WORK/ir")
say tools_produce_idempotent_of_plain "$ir" fraction
say tools_consume_lines_s "$c" lines/s
say tools_consume_mb_s "$(median <"$WORK/cmb")" MB/s
target tools_produce_lines_s "$p" '>=' 1000000 lines/s
target tools_consume_lines_s "$c" '>=' 1000000 lines/s
target tools_produce_keyed_of_plain "$kr" '>=' 0.9 fraction
target tools_produce_idempotent_of_plain "$ir" '>=' 0.9 fraction
