#!/bin/sh
# kafka: the Kafka listener (klog-serve --kafka-listen) against the native
# port, with Debian's kcat (librdkafka) on one side and klog's tools on the
# other, on the same input: KAFKA_RECORDS records of 200 bytes (a line each).
# Every run has a fresh broker with both listeners, and in it, the order of
# the variants turned by one each run:
#   produce  kcat -P -t T -p 0 < file            librdkafka defaults
#                                                (acks all, linger.ms 5,
#                                                so -X linger.ms=5 is this
#                                                run; 10000 a batch, 1 MB)
#            kcat -P ... -X acks=1               as klog-produce acknowledges
#            klog-produce -t T -p 0 < file       its defaults (acks 1,
#                                                batches of 1000), as tools
#            and the broker's CPU seconds per MB each produce took
#            (below), beside the native one's
#   consume  (three read what klog-produce wrote: plain lines)
#            kcat -C -t T -p 0 -o beginning -e > /dev/null
#            kcat -C ... -o 0 -e -X fetch.wait.max.ms=10: the same without
#            librdkafka's fixed waits (see "EOF" and "-o beginning" below)
#            klog-consume -t T -p 0 -o beginning -e > /dev/null
#            (and two read the record batches kcat produced, stored as
#            they came: the Kafka path end to end)
#            kcat -C ... -o 0 -e -X fetch.wait.max.ms=10   (kbat)
#            klog-consume -t T -p 0 -o beginning -e        (nbat)
#            and the broker's CPU seconds (the run time of all its
#            threads, /proc/PID/task/*/schedstat, in ns) per MB each
#            consume took, and its ratio to the native one on the same
#            bytes (target: at most 1.5): the native path sends with
#            sendfile; the Kafka one reads plain lines, makes a header for
#            each message and copies the payloads, and sends batches of
#            16 KiB or more with sendfile behind a 21-byte prefix.  The
#            five consumes go KAFKA_CONSUMES times a run
#            (default 3), each time in another order, so that every Kafka
#            figure has a native one taken beside it; the ratio is the
#            median of those rounds' ratios, and the native figure's
#            spread is shown (see "Noise" below)
#   records/s and MB/s (MB: 10^6 payload bytes), each kcat figure's ratio
#   to the native one (target: at least 0.5).
# EOF: kcat -e stops at the first empty fetch at the high watermark, and
# the broker holds that one for librdkafka's fetch.wait.max.ms (500 ms by
# default), as Kafka does; klog-consume -e knows the end from the start.
# -o beginning: librdkafka 2.0.2 asks for the earliest offset (ListOffsets)
# and, when the partition has not joined its broker thread yet (a race lost
# about one start in six here), retries after a fixed 500 ms; -o 0 (the
# same message) fetches at once.  Both waits are in the default figure;
# the variant shows the rate without them.
# librdkafka also fetches 1 MiB a partition a request (fetch.message.max.
# bytes), and so does klog-consume.
# Noise: the native consume's broker CPU for the same 200 MB moves between
# about 37 and 170 ms from one consume to the next on a 2-CPU VM shared
# with other work, with the same system calls each time (397 sendfile,
# 206 epoll_wait, 202 sendto, counted with perf stat: no partial sends,
# no extra wakeups), 0 to 3 ms in ksoftirqd, no steal, and the same profile
# (perf record: TCP's transmit and, over loopback, the receiver's softirq
# work charged to the sender, which runs in whatever task is current), only
# more of it.  A memcpy loop timed beside each consume moved by a fifth
# where the consume moved threefold; what the native figure followed was
# the machine's load: at a load average of 2.3 to 2.7 it was 52 to 165 ms,
# as much as kcat's 104 to 157 ms in the same rounds, and 37 to 50 ms on
# a quieter machine.  The Kafka consume moves less (its copies are most of
# it), so the ratio of two single runs swings between 1 and 3.5; the
# medians of many adjacent pairs are what this reports.
#
# Then a fetch at an arbitrary byte: one partition of one segment of
# KAFKA_SEEK_BYTES (default 1 GiB, --segment-bytes twice that), written
# once by klog-produce and kept for every run; each run a fresh broker on
# it (so no start is remembered), then, timed from start to exit:
#   kcat -C -t T -p 0 -o 0 -c 1 -e             (a boundary: no scan; first,
#                                               so the others do not pay
#                                               for opening the segment;
#                                               not -o beginning, whose
#                                               500 ms retry is above)
#   -o N, N inside the last message but one    (hops over the whole segment)
#   -o M, M inside the message at the middle   (the remembered start is past
#                                               M: hops from the start)
#   -o M + 20900 (100 messages on)              (hops from the start
#                                               remembered for M: cheap)
# in ms, and each case less the -o 0 one; and the first fetch's
# round trip as librdkafka logs it (-d protocol: "rtt"), the broker's part
# without kcat's start and stop (tens of ms, which vary by a few from one
# run to the next: more than a 64 MiB scan takes).  The page cache is warm
# (the segment is read once before the runs; no scenario drops caches).
#
# Knobs: KAFKA_RECORDS (default 1000000), KAFKA_SEEK_BYTES (default 1G),
# both times BENCH_SCALE; KAFKA_CONSUMES (default 3).  Skipped without
# kcat.
. "$(dirname "$0")/lib.sh"

KCAT=${KCAT:-/usr/bin/kcat}
PRODUCE=$ROOT/bin/klog-produce
CONSUME=$ROOT/bin/klog-consume
if [ ! -x "$KCAT" ]; then
	note "kafka: skipped (no kcat at $KCAT)"
	exit 0
fi
bench_setup kafka

HZ=$(getconf CLK_TCK)

# cpu_ns PID: the CPU time of PID's threads so far, in ns: their run times
# in /proc/PID/task/*/schedstat, where the kernel has them, rather than the
# clock ticks of /proc/PID/stat (10 ms each: a consume of 200 MB takes
# tens of them).  A thread that ends between two readings is not counted:
# the broker's live as long as it does.
cpu_ns() {
	if [ -r "/proc/$1/schedstat" ]; then
		cat "/proc/$1"/task/*/schedstat |
			awk '{ s += $1 } END { printf "%.0f\n", s }'
	else
		awk -v t="$(cpu_ticks "$1")" -v hz="$HZ" \
			'BEGIN { printf "%.0f\n", t * 1e9 / hz }'
	fi
}

# kbroker DIR [klog-serve options]: broker_start with a Kafka listener on
# a free port as well (tried again on another port should that one be
# taken meanwhile).  Sets BROKER, BROKER_PID and KAFKA (host:port).
kbroker() {
	_kdir=$1
	shift
	for _try in 1 2 3; do
		_kport=$(free_port)
		: >"$_kdir.log"
		"$SERVE" -d "$_kdir" -l 127.0.0.1:0 \
			--kafka-listen "127.0.0.1:$_kport" "$@" \
			2>>"$_kdir.log" &
		BROKER_PID=$!
		track "$BROKER_PID"
		_n=1000
		while [ "$_n" -gt 0 ] && kill -0 "$BROKER_PID" 2>/dev/null; do
			# Both sockets are bound and listening before the
			# broker logs either line.
			if grep -q "Kafka listener on 127.0.0.1:$_kport\$" \
				"$_kdir.log"; then
				_port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' \
					"$_kdir.log" | tail -n 1)
				BROKER=127.0.0.1:$_port
				KAFKA=127.0.0.1:$_kport
				return 0
			fi
			sleep 0.01
			_n=$((_n - 1))
		done
		kill -KILL "$BROKER_PID" 2>/dev/null || :
		wait "$BROKER_PID" 2>/dev/null || :
		untrack "$BROKER_PID"
	done
	cat "$_kdir.log" >&2
	echo "kafka: klog-serve with a Kafka listener did not start" >&2
	exit 1
}

# topic_bytes DIR TOPIC: bytes in the segments of TOPIC's partition 0.
topic_bytes() {
	find "$1/$2-0" -type f -name '*.klog' -printf '%s\n' |
		awk '{ s += $1 } END { printf "%.0f\n", s }'
}

# timed CMD...: run CMD, print the seconds it took; fail if it does.
timed() {
	_t0=$(now_s)
	"$@" || {
		echo "kafka: failed: $*" >&2
		exit 1
	}
	elapsed "$_t0" "$(now_s)"
}

# ms NS: NS nanoseconds in milliseconds.
ms() { awk -v n="$1" 'BEGIN { printf "%.1f\n", n / 1e6 }'; }

# per_s COUNT SECONDS / mb_s SECONDS: a rate, and a payload MB/s.
per_s() { ratio "$1" "$2" 0; }
mb_s() { awk -v b="$payload" -v s="$1" 'BEGIN { printf "%.1f\n", b / s / 1e6 }'; }

# cpu_per_mb NS: broker CPU seconds per payload MB.
cpu_per_mb() {
	awk -v t="$1" -v b="$payload" \
		'BEGIN { printf "%.6f\n", t / 1e9 / (b / 1e6) }'
}

p_kcat() { "$KCAT" -b "$KAFKA" -P -t "$1" -p 0 <"$WORK/input"; }
p_kcat1() { "$KCAT" -b "$KAFKA" -P -t "$1" -p 0 -X acks=1 <"$WORK/input"; }
p_native() { "$PRODUCE" -q -b "$BROKER" -t "$1" -p 0 <"$WORK/input"; }

# The consumers read topic native; kcat's "reached end" line, which it writes
# without -q, is kept to check it got to the end.
c_kcat() {
	"$KCAT" -b "$KAFKA" -C -t native -p 0 -o beginning -e \
		>/dev/null 2>"$WORK/kcat.err"
}
c_kcatw() {
	"$KCAT" -b "$KAFKA" -C -t "${1:-native}" -p 0 -o 0 -e \
		-X fetch.wait.max.ms=10 >/dev/null 2>"$WORK/kcat.err"
}
c_native() {
	"$CONSUME" -v -b "$BROKER" -t "${1:-native}" -p 0 -o beginning -e \
		>/dev/null 2>"$WORK/consume.err"
}
# The same two ways over topic kcat, the record batches kcat produced.
c_kbat() { c_kcatw kcat; }
c_nbat() { c_native kcat; }

# consume NAME: one timed consume, with the broker's CPU time around it;
# appends to $WORK/c_NAME and $WORK/cpu_NAME and checks the count.
consume() {
	_c0=$(cpu_ns "$BROKER_PID")
	_s=$(timed "c_$1")
	_c1=$(cpu_ns "$BROKER_PID")
	case $1 in
	native | nbat)
		_got=$(awk '{ print $2 }' "$WORK/consume.err")
		[ "$_got" = "$records" ] || {
			echo "kafka: klog-consume read $_got of $records" >&2
			cat "$WORK/consume.err" >&2
			exit 1
		} ;;
	*)
		_topic=native _end=$logbytes
		[ "$1" = kbat ] && _topic=kcat _end=$kcatbytes
		_eof=$(sed -n "s/.*Reached end of topic $_topic \\[0\\] at offset \\([0-9]*\\).*/\\1/p" \
			"$WORK/kcat.err")
		[ "$_eof" = "$_end" ] || {
			echo "kafka: kcat stopped at $_eof, not $_end" >&2
			cat "$WORK/kcat.err" >&2
			exit 1
		} ;;
	esac
	per_s "$records" "$_s" >>"$WORK/c_$1"
	mb_s "$_s" >>"$WORK/cmb_$1"
	cpu_per_mb $((_c1 - _c0)) >>"$WORK/cpu_$1"
	eval "cs_$1=\$_s ct_$1=\$((_c1 - _c0))"
}

# rotate N WORDS...: WORDS turned left by N.
rotate() {
	_k=$(($1 % ($# - 1)))
	shift
	while [ "$_k" -gt 0 ]; do
		_w=$1
		shift
		set -- "$@" "$_w"
		_k=$((_k - 1))
	done
	echo "$@"
}

records=$(scaled "${KAFKA_RECORDS:-1000000}" 1000)
rounds=${KAFKA_CONSUMES:-3}
payload=$((records * 200))
seekbytes=$(scaled "$(bytes "${KAFKA_SEEK_BYTES:-1G}")" 1048576)
records "$records" >"$WORK/input"
note "$records records of 200 bytes ($(wc -c <"$WORK/input") bytes of" \
	"input), $RUNS runs; $("$KCAT" -V 2>&1 | sed -n \
	's/^Version \([^ ]*\) .*librdkafka \([^ ]*\) .*/kcat \1, librdkafka \2/p')"

# The partition for the seeks, written once.
seekrecs=$((seekbytes / ENTRY))
kbroker "$WORK/seek" --segment-bytes $((seekbytes * 2))
records "$seekrecs" | "$PRODUCE" -q -b "$BROKER" -t s -p 0 || {
	echo "kafka: klog-produce of the seek partition failed" >&2
	exit 1
}
broker_stop
nseg=$(find "$WORK/seek/s-0" -name '*.klog' | wc -l)
segsize=$(topic_bytes "$WORK/seek" s)
[ "$nseg" = 1 ] && [ "$segsize" = $((seekrecs * ENTRY)) ] || {
	echo "kafka: the seek partition has $nseg segments, $segsize bytes" >&2
	exit 1
}
cat "$WORK/seek/s-0"/*.klog >/dev/null
nmsg=$((segsize / ENTRY))
o_end=$(((nmsg - 2) * ENTRY + 104))
o_mid=$((nmsg / 2 * ENTRY + 104))
o_near=$((o_mid + 100 * ENTRY))
note "seek partition: one segment of $segsize bytes ($nmsg messages);" \
	"offsets: end $o_end, mid $o_mid, near $o_near"

# seek NAME OFFSET: one timed kcat -c 1 at OFFSET; checks
# the message it printed is the one holding that byte.
seek() {
	_t0=$(now_s)
	"$KCAT" -b "$KAFKA" -C -t s -p 0 -o "$2" -c 1 -e -q -f '%o\n' \
		-d protocol >"$WORK/seek.out" 2>"$WORK/seek.err" || {
		echo "kafka: kcat -o $2 failed" >&2
		exit 1
	}
	_ms=$(awk -v a="$_t0" -v b="$(now_s)" 'BEGIN { printf "%.1f\n", (b - a) * 1000 }')
	_at=$(cat "$WORK/seek.out")
	_want=$(($2 / ENTRY * ENTRY + ENTRY - 1))
	[ "$_at" = "$_want" ] || {
		echo "kafka: kcat -o $2 gave offset $_at, not $_want" >&2
		exit 1
	}
	_rtt=$(sed -n 's/.*Received FetchResponse.*rtt \([0-9.]*\)ms.*/\1/p' \
		"$WORK/seek.err" | head -n 1)
	[ -n "$_rtt" ] || {
		echo "kafka: no FetchResponse in kcat -d protocol" >&2
		exit 1
	}
	echo "$_ms" >>"$WORK/s_$1"
	echo "$_rtt" >>"$WORK/f_$1"
	eval "sm_$1=\$_ms sf_$1=\$_rtt"
}

for f in p_kcat p_kcat1 p_native pr_kcat pr_kcat1 c_kcat c_kcatw c_native \
	c_kbat c_nbat cr_kcat cr_kcatw cr_kbat cpu_kcat cpu_kcatw cpu_native \
	cpu_kbat cpu_nbat cpur_kcat cpur_kcatw cpur_kbat \
	s_begin s_end s_mid s_near f_begin f_end f_mid f_near; do
	: >"$WORK/$f"
done
for f in kcat kcat1 native; do : >"$WORK/pmb_$f"; : >"$WORK/pcpu_$f"; done
for f in kcat kcat1; do : >"$WORK/pcpur_$f"; done
for f in kcat kcatw native kbat nbat; do : >"$WORK/cmb_$f"; done

i=1
while [ "$i" -le "$RUNS" ]; do
	rm -rf "$WORK/data"
	kbroker "$WORK/data"
	for v in $(rotate "$i" kcat kcat1 native); do
		c0=$(cpu_ns "$BROKER_PID")
		s=$(timed "p_$v" "$v")
		c1=$(cpu_ns "$BROKER_PID")
		per_s "$records" "$s" >>"$WORK/p_$v"
		mb_s "$s" >>"$WORK/pmb_$v"
		cpu_per_mb $((c1 - c0)) >>"$WORK/pcpu_$v"
		eval "ps_$v=\$s pt_$v=\$((c1 - c0))"
	done
	logbytes=$(topic_bytes "$WORK/data" native)
	kcatbytes=$(topic_bytes "$WORK/data" kcat)
	# kcat's record batches are kept as magic-2 entries, of other sizes
	# than klog-produce's: its records are counted instead.
	for v in kcat kcat1; do
		"$CONSUME" -v -b "$BROKER" -t "$v" -p 0 -o beginning -e \
			>/dev/null 2>"$WORK/count.err"
		got=$(awk '{ print $2 }' "$WORK/count.err")
		[ "$got" = "$records" ] || {
			echo "kafka: kcat ($v) wrote $got records of" \
				"$records" >&2
			exit 1
		}
	done
	ratio "$ps_native" "$ps_kcat" >>"$WORK/pr_kcat"
	ratio "$ps_native" "$ps_kcat1" >>"$WORK/pr_kcat1"
	ratio "$pt_kcat" "$pt_native" >>"$WORK/pcpur_kcat"
	ratio "$pt_kcat1" "$pt_native" >>"$WORK/pcpur_kcat1"
	if [ "$i" -eq 1 ]; then
		# Once, untimed: kcat delivers every record, not only the end.
		got=$("$KCAT" -b "$KAFKA" -C -t native -p 0 -o 0 -e -q \
			-f '%s\n' | wc -l)
		[ "$got" = "$records" ] || {
			echo "kafka: kcat read $got of $records records" >&2
			exit 1
		}
	fi
	cn=
	ck=
	cw=
	cb=
	cnb=
	j=0
	while [ "$j" -lt "$rounds" ]; do
		for v in $(rotate $((i + j)) native kcat kcatw nbat kbat); do
			consume "$v"
		done
		ratio "$cs_native" "$cs_kcat" >>"$WORK/cr_kcat"
		ratio "$cs_native" "$cs_kcatw" >>"$WORK/cr_kcatw"
		ratio "$cs_nbat" "$cs_kbat" >>"$WORK/cr_kbat"
		ratio "$ct_kcat" "$ct_native" >>"$WORK/cpur_kcat"
		ratio "$ct_kcatw" "$ct_native" >>"$WORK/cpur_kcatw"
		ratio "$ct_kbat" "$ct_nbat" >>"$WORK/cpur_kbat"
		cn="$cn $(ms "$ct_native")"
		ck="$ck $(ms "$ct_kcat")"
		cw="$cw $(ms "$ct_kcatw")"
		cb="$cb $(ms "$ct_kbat")"
		cnb="$cnb $(ms "$ct_nbat")"
		j=$((j + 1))
	done
	broker_stop
	rm -rf "$WORK/data"
	note "run $i: produce kcat $ps_kcat s, kcat acks=1 $ps_kcat1 s," \
		"klog-produce $ps_native s; consume kcat $cs_kcat s," \
		"kcat -o 0 wait 10 ms $cs_kcatw s, klog-consume $cs_native s" \
		"(the last round's); broker CPU ms kcat$ck, kcat -o 0$cw," \
		"klog-consume$cn; of kcat's batches: kcat -o 0$cb," \
		"klog-consume$cnb;" \
		"producing: kcat $(ms "$pt_kcat"), kcat acks=1" \
		"$(ms "$pt_kcat1"), klog-produce $(ms "$pt_native")"

	kbroker "$WORK/seek" --segment-bytes $((seekbytes * 2))
	seek begin 0
	seek end "$o_end"
	seek mid "$o_mid"
	seek near "$o_near"
	broker_stop
	note "run $i: kcat -c 1 at 0 $sm_begin ms (its fetch" \
		"$sf_begin ms), end $sm_end ($sf_end), mid $sm_mid ($sf_mid)," \
		"mid+20900 $sm_near ($sf_near)"
	i=$((i + 1))
done

for v in kcat kcat1 native; do
	say "kafka_produce_${v}_recs_s" "$(median <"$WORK/p_$v")" records/s
	say "kafka_produce_${v}_mb_s" "$(median <"$WORK/pmb_$v")" MB/s
done
for v in kcat kcat1; do
	r=$(median <"$WORK/pr_$v")
	say "kafka_produce_${v}_ratio" "$r" of_native
	target "kafka_produce_${v}_ratio" "$r" '>=' 0.5 of_native
done
for v in kcat kcatw native kbat nbat; do
	say "kafka_consume_${v}_recs_s" "$(median <"$WORK/c_$v")" records/s
	say "kafka_consume_${v}_mb_s" "$(median <"$WORK/cmb_$v")" MB/s
done
for v in kcat kcatw kbat; do
	r=$(median <"$WORK/cr_$v")
	say "kafka_consume_${v}_ratio" "$r" of_native
	target "kafka_consume_${v}_ratio" "$r" '>=' 0.5 of_native
done
for v in kcat kcatw native kbat nbat; do
	say "kafka_fetch_cpu_${v}_s_per_mb" "$(median <"$WORK/cpu_$v")" s/MB
	note "kafka_fetch_cpu_${v}: $(wc -l <"$WORK/cpu_$v") consumes," \
		"from $(sort -g "$WORK/cpu_$v" | head -n 1) to" \
		"$(sort -g "$WORK/cpu_$v" | tail -n 1) s/MB"
done
for v in kcat kcatw kbat; do
	r=$(median <"$WORK/cpur_$v")
	say "kafka_fetch_cpu_${v}_ratio" "$r" of_native
	target "kafka_fetch_cpu_${v}_ratio" "$r" '<=' 1.5 of_native
done
# The produce path beside it: the Kafka listener decodes RecordBatch v2 and
# writes 0.7 entries, the native one checks the CRCs it is sent and writes
# them as they came.
for v in kcat kcat1 native; do
	say "kafka_produce_cpu_${v}_s_per_mb" "$(median <"$WORK/pcpu_$v")" s/MB
done
for v in kcat kcat1; do
	say "kafka_produce_cpu_${v}_ratio" "$(median <"$WORK/pcpur_$v")" \
		of_native
done
b=$(median <"$WORK/s_begin")
say kafka_seek_start_ms "$b" ms
say kafka_seek_start_fetch_ms "$(median <"$WORK/f_begin")" ms
for c in end mid near; do
	m=$(median <"$WORK/s_$c")
	say "kafka_seek_${c}_ms" "$m" ms
	say "kafka_seek_${c}_extra_ms" \
		"$(awk -v m="$m" -v b="$b" 'BEGIN { printf "%.1f\n", m - b }')" ms
	say "kafka_seek_${c}_fetch_ms" "$(median <"$WORK/f_$c")" ms
done
