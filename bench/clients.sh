#!/bin/sh
# clients: many clients on one broker, 200-byte messages, one partition.
#   N producers   N bench_produce processes (50 messages per request,
#                 acks 1) splitting CLIENTS_MESSAGES between them, all
#                 started at the same wall-clock time; aggregate msg/s is
#                 every message over the span from the first start to the
#                 last finish
#   N consumers   then N bench_consume processes, each reading its own
#                 slice of what the producers wrote, aggregated the same way
# for N in CLIENTS_COUNTS (default "1 4 16 64"), each run on a fresh
# broker.  Then a slow consumer: a partition holding CLIENTS_BIG (default
# 10G, less if the disk is short) dropped from the page cache, and a
# consumer reading it from the start, from the disk, beside a tail consumer
# following a producer (tail_msgs_s) and bench_latency measuring end to end
# at CLIENTS_TAIL_RATE (default 10000 msg/s).  The slow consumer is stopped
# and continued so that rounds without it (alone) and with it
# (beside_slow, the broker's default --cold-read-rate) alternate, RUNS of
# each; and, where chrt(1) is there, rounds with it at idle CPU priority
# (beside_slow_idle: SCHED_IDLE, so that its own work, receiving and
# checking every CRC, takes only CPU time nobody else wants, as on a
# machine of its own; what is left is the broker's cost); then two rounds
# with it uncapped (--cold-read-rate off).  Each
# figure is the median of its rounds; steal_ms is the CPU time the
# hypervisor took during a round (see steal_ms in lib.sh), slow_mb_s what
# the broker read from the disk for the slow consumer.  Knobs:
# CLIENTS_COUNTS, CLIENTS_MESSAGES (default 5000000), CLIENTS_BIG,
# CLIENTS_TAIL_RATE, CLIENTS_LATENCY_SECONDS (default 10), CLIENTS_SETTLE
# (seconds between evicting and measuring, default 10); sizes and counts
# times BENCH_SCALE.
. "$(dirname "$0")/lib.sh"
bench_setup clients

counts=${CLIENTS_COUNTS:-1 4 16 64}
total=$(scaled "${CLIENTS_MESSAGES:-5000000}" 1000)

# aggregate FILE...: every message of the outputs in FILEs over the span
# from the earliest start to the latest end.
aggregate() {
	cat "$@" | awk '{
		for (i = 1; i < NF; i++) {
			if ($i == "msgs") n += $(i + 1)
			if ($i == "start" && (s == "" || $(i + 1) < s)) s = $(i + 1)
			if ($i == "end" && $(i + 1) > e) e = $(i + 1)
		}
	} END { printf "%.0f\n", n / (e - s) }'
}

# spawn N FUNC: N clients at once: FUNC K START runs client K (0..N-1)
# with START as its -S, output in $WORK/out.K.  FUNC must exec the
# program, so that the pid recorded is the program's.  Waits for them all.
spawn() {
	_at=$(start_at $((500 + 20 * $1)))
	_pids=
	rm -f "$WORK"/out.*
	_k=0
	while [ "$_k" -lt "$1" ]; do
		"$2" "$_k" "$_at" >"$WORK/out.$_k" &
		_pids="$_pids $!"
		track "$!"
		_k=$((_k + 1))
	done
	_failed=0
	for _p in $_pids; do
		wait "$_p" || _failed=1
		untrack "$_p"
	done
	[ "$_failed" -eq 0 ] || { echo "clients: a client failed" >&2; exit 1; }
}

producer() {
	exec "$B/bench_produce" -b "$BROKER" -n "$per" -m 50 -a 1 -S "$2"
}

# Every entry has the same size, so slice K starts at a message boundary.
consumer() {
	exec "$B/bench_consume" -b "$BROKER" -o $(($1 * per * ENTRY)) \
		-E $((($1 + 1) * per * ENTRY)) -S "$2"
}

for n in $counts; do
	per=$((total / n))
	: >"$WORK/p"
	: >"$WORK/c"
	i=1
	while [ "$i" -le "$RUNS" ]; do
		broker_start "$WORK/data"
		spawn "$n" producer
		p=$(aggregate "$WORK"/out.*)
		spawn "$n" consumer
		c=$(aggregate "$WORK"/out.*)
		broker_stop
		rm -rf "$WORK/data"
		note "$n clients run $i: producers $p msg/s, consumers $c msg/s"
		echo "$p" >>"$WORK/p"
		echo "$c" >>"$WORK/c"
		i=$((i + 1))
	done
	say "clients_${n}_produce_msgs_s" "$(median <"$WORK/p")" msg/s
	say "clients_${n}_consume_msgs_s" "$(median <"$WORK/c")" msg/s
done

# The slow consumer: a big partition read from the start, from the disk.
big=$(scaled "$(bytes "${CLIENTS_BIG:-10G}")" "$ENTRY")
tmsgs=$(scaled 2000000 1000)
spare=$((tmsgs * ENTRY * (RUNS * 2 + 2) + 2147483648))
free=$(free_bytes "$TMPROOT")
if [ $((big + spare)) -gt "$free" ]; then
	big=$(((free - spare) / 2))
	note "clients: the disk is short, slow-consumer log cut to" \
		"$((big >> 20)) MiB"
fi
if [ "$big" -lt 104857600 ] && [ "$SCALE" = 1 ]; then
	note "clients: slow consumer skipped (no room for a log of 100 MiB)"
	exit 0
fi
rate=${CLIENTS_TAIL_RATE:-10000}
secs=$(scaled "${CLIENTS_LATENCY_SECONDS:-10}" 1)
settle=$(scaled "${CLIENTS_SETTLE:-10}" 0)
note "slow consumer over $((big >> 20)) MiB; tail runs of $tmsgs" \
	"messages; latency at $rate msg/s for $secs s"
broker_start "$WORK/data"
fill "$BROKER" bench $((big / ENTRY))

# The slow consumer is started once, on the cold log, and stopped and
# continued (SIGSTOP, SIGCONT) so that the rounds without it and with it
# alternate in the same state of the machine: evicting gigabytes and the
# hypervisor's steal move the tail's p99 by more than the slow consumer
# does, so a before-and-after would measure them.  Each round is one tail
# run and one latency run; the order within a round alternates.

# round LABEL: one tail run and one latency run; their figures, the steal
# and what the prefetch thread read are appended to $WORK/LABEL.*.
round() {
	st0=$(steal_ms)
	rb0=$(thread_read_bytes "$BROKER_PID" klog-prefetch)
	ms0=$(now_ms)
	p=$(produce_followed "$tmsgs" "$WORK/tail")
	out=$("$B/bench_latency" -b "$BROKER" -t bench -r "$rate" -d "$secs")
	rb1=$(thread_read_bytes "$BROKER_PID" klog-prefetch)
	ms1=$(now_ms)
	stolen=$(($(steal_ms) - st0))
	slow_mb=$(awk -v b=$((rb1 - rb0)) -v t=$((ms1 - ms0)) \
		'BEGIN { printf "%.0f", b / 1000 / t }')
	note "$1 tail: $(cat "$WORK/tail")"
	note "$1 producer: $p"
	note "$1 latency: $out"
	note "$1 steal ${stolen} ms, prefetch read ${slow_mb} MB/s"
	field msgs_s "$(cat "$WORK/tail")" >>"$WORK/$1.tail"
	for k in p50 p99 p999 max; do
		field "${k}_ms" "$out" >>"$WORK/$1.$k"
	done
	echo "$stolen" >>"$WORK/$1.steal"
	echo "$slow_mb" >>"$WORK/$1.slow"
}

# summary LABEL: the medians of LABEL's rounds, if it had any.
summary() {
	if [ ! -s "$WORK/$1.tail" ]; then
		note "$1: no rounds to report"
		return 0
	fi
	say "clients_tail_$1_msgs_s" "$(median <"$WORK/$1.tail")" msg/s
	for k in p50 p99 p999 max; do
		say "clients_tail_$1_${k}_ms" "$(median <"$WORK/$1.$k")" ms
	done
	say "clients_tail_$1_steal_ms" "$(median <"$WORK/$1.steal")" ms
	say "clients_$1_slow_mb_s" "$(median <"$WORK/$1.slow")" MB/s
}

# slow_start FROM: the slow consumer, reading the big partition from
# message FROM to its end, stopped once it has asked for its first fetch.
slow_start() {
	"$B/bench_consume" -b "$BROKER" -o $(($1 * ENTRY)) \
		-E $((big / ENTRY * ENTRY)) >"$WORK/slow" 2>&1 &
	slow_pid=$!
	track "$slow_pid"
	sleep 1
	kill -STOP "$slow_pid" 2>/dev/null || :
}

# slow_running: whether the slow consumer is still there (running or
# stopped; not a zombie).
slow_running() {
	_state=$(awk '{ print $3 }' "/proc/$slow_pid/stat" 2>/dev/null) || :
	[ -n "$_state" ] && [ "$_state" != Z ]
}

slow_end() {
	if slow_running; then
		kill -CONT "$slow_pid"
		kill -TERM "$slow_pid"
		note "the slow consumer was still reading at the end, as it" \
			"should"
	else
		note "the slow consumer ended before the rounds did:" \
			"$(cat "$WORK/slow")"
	fi
	wait "$slow_pid" 2>/dev/null || :
	untrack "$slow_pid"
}

# beside LABEL [POLICY]: a round with the slow consumer reading, at chrt's
# POLICY (-o, the default: normal; -i: idle); none once it has ended, and
# a round it ended in is left out (its figures are the last line of each
# $WORK/LABEL.* file).
beside() {
	if ! slow_running; then
		note "$1: no round, the slow consumer has ended"
		return 0
	fi
	if [ -n "$chrt" ]; then
		chrt -a "${2:--o}" -p 0 "$slow_pid" >/dev/null
	fi
	kill -CONT "$slow_pid"
	sleep 1
	round "$1"
	if slow_running; then
		kill -STOP "$slow_pid"
	else
		note "$1: round left out, the slow consumer ended in it" \
			"(make CLIENTS_BIG larger)"
		for _f in "$WORK/$1".*; do sed -i '$d' "$_f"; done
	fi
}

rm -f "$WORK"/alone.* "$WORK"/beside_slow.* "$WORK"/beside_slow_idle.* \
	"$WORK"/beside_slow_uncapped.*
chrt=$(command -v chrt || :)
[ -n "$chrt" ] || note "no chrt(1): no rounds at idle priority"
evict "$WORK/data"
# Let the host take back the pages just freed before measuring anything.
sleep "$settle"
slow_start 0
i=1
while [ "$i" -le "$RUNS" ]; do
	if [ $((i % 2)) -eq 1 ]; then
		round alone
		beside beside_slow
		[ -z "$chrt" ] || beside beside_slow_idle -i
	else
		[ -z "$chrt" ] || beside beside_slow_idle -i
		beside beside_slow
		round alone
	fi
	i=$((i + 1))
done
slow_end
summary alone
summary beside_slow
[ -z "$chrt" ] || summary beside_slow_idle
# Uncapped, from the start again, evicted again: two rounds only, since
# the slow consumer reads gigabytes a round.
broker_stop
broker_start "$WORK/data" --cold-read-rate off
evict "$WORK/data"
sleep "$settle"
slow_start 0
beside beside_slow_uncapped
beside beside_slow_uncapped
slow_end
broker_stop
summary beside_slow_uncapped
