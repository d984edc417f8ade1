#!/bin/sh
# retained: performance at scale.  For each size in RETAINED_SIZES (default
# "100M 1G 10G 20G"; the first is the reference), a fresh broker with that
# much already in one partition, then:
#   restart_s        a clean stop and a start on the full data directory
#                    (after a sync, so no writeback of the fill is left)
#   produce_msgs_s   bench_produce, 50 messages per request, acks 1
#   tail_msgs_s      bench_consume of the newest messages
#   start_msgs_s     bench_consume from offset 0 (RETAINED_COLD=1 drops the
#                    partition from the page cache first, so it reads the
#                    disk; by default it reads whatever is cached)
#   rss_kb, hwm_kb   the broker's VmRSS and VmHWM afterwards
#   fresh_pagecache_mb_s  then write(2) of as many bytes as a produce run
#                    into a new file (bench_sys pagecache, its first run):
#                    what the machine gives for pages not used yet, which on
#                    a virtual machine that hands free pages back to its
#                    host can be a tenth of what it gives for reused ones
# and each figure beside the first size's as a ratio (target: within 10%).
# A size that does not fit on the disk (with room for the runs and 1 GiB to
# spare) is skipped with a line saying so.  Knobs: RETAINED_SIZES (times
# BENCH_SCALE), RETAINED_PRODUCE (messages per produce run, default
# 2000000), RETAINED_READ (messages per read, default 500000; both times
# BENCH_SCALE), RETAINED_COLD.
. "$(dirname "$0")/lib.sh"
bench_setup retained

sizes=${RETAINED_SIZES:-100M 1G 10G 20G}
pmsgs=$(scaled "${RETAINED_PRODUCE:-2000000}" 1000)
rmsgs=$(scaled "${RETAINED_READ:-500000}" 1000)
cold=${RETAINED_COLD:-0}
note "produce runs of $pmsgs messages, reads of $rmsgs, $RUNS runs," \
	"cold start reads: $cold"

# runs NAME CMD...: RUNS runs of a bench program; MED is the median msgs_s.
runs() {
	name=$1
	shift
	: >"$WORK/v"
	i=1
	while [ "$i" -le "$RUNS" ]; do
		[ "$name" != start ] || [ "$cold" != 1 ] || evict "$WORK/data"
		st0=$(steal_ms)
		out=$("$@")
		note "$label $name run $i: $out steal_ms $(($(steal_ms) - st0))"
		field msgs_s "$out" >>"$WORK/v"
		i=$((i + 1))
	done
	MED=$(median <"$WORK/v")
}

# report LABEL KEY VALUE UNIT: the line, and its ratio to the first size.
report() {
	say "retained_${1}_$2" "$3" "$4"
	if [ -z "$(eval echo "\${first_$2:-}")" ]; then
		eval "first_$2=\$3"
	else
		say "retained_${1}_${2}_ratio" \
			"$(ratio "$3" "$(eval echo "\$first_$2")")" "of_$first"
	fi
}

first=
for label in $sizes; do
	size=$(scaled "$(bytes "$label")" "$ENTRY")
	msgs=$((size / ENTRY))
	need=$((size + pmsgs * ENTRY * RUNS + 1073741824))
	free=$(free_bytes "$TMPROOT")
	if [ "$need" -gt "$free" ]; then
		note "retained_$label: skipped (needs $((need >> 20)) MiB," \
			"$((free >> 20)) MiB free)"
		continue
	fi
	[ -n "$first" ] || first=$label
	broker_start "$WORK/data"
	fill "$BROKER" bench "$msgs"
	broker_stop
	# Let the kernel write the fill back first: otherwise the figures
	# measure the writeback of gigabytes just written, not the log.
	sync
	t0=$(now_s)
	broker_start "$WORK/data"
	t1=$(now_s)
	report "$label" restart_s "$(elapsed "$t0" "$t1")" s
	runs produce "$B/bench_produce" -b "$BROKER" -n "$pmsgs" -m 50 -a 1
	report "$label" produce_msgs_s "$MED" msg/s
	end=$("$ROOT/bin/klog-consume" -b "$BROKER" -L -t bench |
		awk '{ print $4 }')
	runs tail "$B/bench_consume" -b "$BROKER" \
		-o $((end - rmsgs * ENTRY)) -n "$rmsgs"
	report "$label" tail_msgs_s "$MED" msg/s
	runs start "$B/bench_consume" -b "$BROKER" -o 0 -n "$rmsgs"
	report "$label" start_msgs_s "$MED" msg/s
	report "$label" rss_kb "$(proc_kb "$BROKER_PID" VmRSS)" kB
	report "$label" hwm_kb "$(proc_kb "$BROKER_PID" VmHWM)" kB
	broker_stop
	# The machine's side of produce: writing as much into a new file,
	# first run only (later runs get the pages the first one freed).
	fresh_mb=$(((pmsgs * ENTRY) >> 20))
	[ "$fresh_mb" -ge 1 ] || fresh_mb=1
	fresh=$(TMPDIR=$WORK "$B/bench_sys" pagecache "$fresh_mb" |
		awk '$3 == "run" && $4 == "1:" { print $5 }')
	report "$label" fresh_pagecache_mb_s "${fresh:-nan}" MB/s
	rm -rf "$WORK/data"
done
