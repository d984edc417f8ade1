#!/bin/sh
# compression: gzip against none on nginx access-log lines (bench_accesslog,
# fixed seed), through the tools:
#   klog-produce -t T [-z gzip] < file, then
#   klog-consume -t T -o beginning -e > /dev/null
# bytes on disk per record (the partition's segment files over the line
# count, and du(1) of the partition directory, blocks and all, over it;
# the input's own bytes per line are printed beside), and produce
# and consume throughput, gzip as a fraction of none.  Each run starts a
# fresh broker.  Knob: COMPRESSION_LINES (default 1000000, times
# BENCH_SCALE).
. "$(dirname "$0")/lib.sh"
bench_setup compression

lines=$(scaled "${COMPRESSION_LINES:-1000000}" 1000)
"$B/bench_accesslog" -n "$lines" >"$WORK/input"
size=$(wc -c <"$WORK/input")
note "$lines lines, $size bytes, $RUNS runs"
say compression_input_bytes_per_line "$(ratio "$size" "$lines" 1)" B

# disk DIR: bytes of the segment files under DIR.
disk() {
	find "$1" -name '*.klog' -exec stat -c %s {} + |
		awk '{ n += $1 } END { printf "%.0f\n", n }'
}

for codec in none gzip; do
	for k in p c d du; do : >"$WORK/$k"; done
	i=1
	while [ "$i" -le "$RUNS" ]; do
		broker_start "$WORK/data"
		t0=$(now_s)
		"$ROOT/bin/klog-produce" -q -b "$BROKER" -t t -z "$codec" \
			<"$WORK/input"
		t1=$(now_s)
		"$ROOT/bin/klog-consume" -v -b "$BROKER" -t t -o beginning -e \
			>/dev/null 2>"$WORK/consume.err"
		t2=$(now_s)
		broker_stop
		got=$(awk '{ print $2 }' "$WORK/consume.err")
		[ "$got" = "$lines" ] || {
			echo "compression: klog-consume read $got of $lines" >&2
			exit 1
		}
		d=$(disk "$WORK/data")
		du -sk "$WORK/data/t-0" | awk '{ print $1 * 1024 }' >>"$WORK/du"
		rm -rf "$WORK/data"
		p=$(elapsed "$t0" "$t1")
		c=$(elapsed "$t1" "$t2")
		note "$codec run $i: klog-produce $p s, klog-consume $c s," \
			"$d bytes on disk"
		ratio "$lines" "$p" 0 >>"$WORK/p"
		ratio "$lines" "$c" 0 >>"$WORK/c"
		echo "$d" >>"$WORK/d"
		i=$((i + 1))
	done
	p=$(median <"$WORK/p")
	c=$(median <"$WORK/c")
	d=$(ratio "$(median <"$WORK/d")" "$lines" 1)
	say "compression_${codec}_bytes_per_record" "$d" B
	say "compression_${codec}_du_bytes_per_record" \
		"$(ratio "$(median <"$WORK/du")" "$lines" 1)" B
	say "compression_${codec}_produce_lines_s" "$p" lines/s
	say "compression_${codec}_consume_lines_s" "$c" lines/s
	if [ "$codec" = none ]; then
		none_d=$d none_p=$p none_c=$c
	else
		say compression_gzip_size_ratio "$(ratio "$d" "$none_d")" of_none
		say compression_gzip_produce_ratio "$(ratio "$p" "$none_p")" \
			of_none
		say compression_gzip_consume_ratio "$(ratio "$c" "$none_c")" \
			of_none
	fi
done
