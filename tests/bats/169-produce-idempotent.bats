#!/usr/bin/env bats
# klog-produce --idempotent (klog-produce(1), IDEMPOTENCE): a producer id
# from INIT_PRODUCER (klog-protocol(7)), every batch a magic-2 entry with
# its sequence, resent byte for byte.  Acknowledgements lost through a
# relay (ackdrop.py), a broker killed -9 mid-stream and a replicated
# partition's leader killed -9: nothing lost, nothing twice, in order.  A
# mirror whose producer is idempotent killed -9 three times, its requests
# in flight written but unanswered: each restart has a new id, and finds
# at the destination what the killed run wrote past its bookmark: nothing
# lost, nothing twice (mirror.h).

bats_require_minimum_version 1.5.0
load helpers

N=20000

setup() {
	common_setup
	unset KLOG_BROKERS KLOG_ZOOKEEPER KLOG_DATA_DIR
}

teardown() {
	common_teardown
}

# wait_done N: until the producer's report has N records done.
wait_done() {
	local n=600
	until [ -e "$TMP/report" ] && [ "$(wc -l <"$TMP/report")" -ge "$1" ]; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.05
	done
}

# paced FILE: FILE's lines on stdout, 250 every 20 ms, so that what is
# done to a broker or a mirror lands mid-stream.
paced() {
	/usr/bin/python3 -c '
import sys, time
lines = open(sys.argv[1], "rb").readlines()
for i in range(0, len(lines), 250):
    sys.stdout.buffer.write(b"".join(lines[i:i + 250]))
    sys.stdout.flush()
    time.sleep(0.02)' "$1"
}

# produce_bg ARGS...: N numbered lines, paced, through klog-produce
# --idempotent in the background (PROD).
produce_bg() {
	seq -f '%08g' 0 $((N - 1)) >"$TMP/want"
	paced "$TMP/want" | klog-produce -v -t idem -p 0 --batch 250 --idempotent \
		--report "$TMP/report" "$@" >/dev/null 2>"$TMP/producer.err" &
	PROD=$!
	PIDS+=("$PROD")
}

# lose_answers: the relay swallows the broker's answers for 300 ms, then
# drops the connections; requests still pass meanwhile.
lose_answers() {
	local n=300
	touch "$TMP/drop"
	while [ -e "$TMP/drop" ]; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.01
	done
}

# start_relay: ackdrop.py in front of the broker, which advertises it.
start_relay() {
	/usr/bin/python3 "$BATS_TEST_DIRNAME/ackdrop.py" "$RELAY_PORT" \
		"$BROKER_PORT" "$TMP/drop" &
	PIDS+=("$!")
	wait_port "$RELAY_PORT" 5
}

# settled: the sum of the mirror's offset file's positions (0 before it
# is saved).
settled() {
	[ -e "$TMP/mirror.offsets" ] || { echo 0; return; }
	awk '!/^#/ { s += $3 } END { print s + 0 }' "$TMP/mirror.offsets"
}

# mirror_run I: the mirror's I-th run, in the background (CONS, PROD);
# the fourth stops at the source's end.
mirror_run() {
	local end=()

	rm -f "$TMP/pipe"
	mkfifo "$TMP/pipe"
	[ "$1" = 4 ] && end=(-e)
	klog-consume -q -b "$SRC" -t T -J --offsets-from "$TMP/mirror.offsets" \
		"${end[@]}" >"$TMP/pipe" 2>>"$TMP/cons.err" &
	CONS=$!
	klog-produce -v -b "$DST" -t T -J --idempotent --batch 200 \
		--source-offset-file "$TMP/mirror.offsets" <"$TMP/pipe" \
		2>>"$TMP/prod.err" &
	PROD=$!
	PIDS+=("$CONS" "$PROD")
}

# mirror_killed P Q [other|records]: N numbered lines in a source topic T
# of P partitions (with "records", as records with a header and a
# timestamp, in batches of 1000: magic-2 entries), copied by klog-consume
# -J | klog-produce -J --idempotent --source-offset-file into a topic T of
# Q partitions.  Three times, once the positions passed the next step, the
# destination broker is stopped, the mirror sends what it may meanwhile
# (up to 5 requests a link), and is killed -9; the broker, continued,
# writes those requests.  A fourth run goes to the source's end.  With
# "other", an idempotent producer writes the same lines into the
# destination meanwhile.  Each line is there once (twice with "other"),
# and the runs found what the killed ones wrote.
mirror_killed() {
	local i n found times dstpid
	start_broker --topic "T:$1"
	SRC=$KLOG_BROKERS
	seq 1 "$N" >"$TMP/want"
	if [ "${3:-}" = records ]; then
		klog-produce -q -b "$SRC" -t T -H via=src --timestamp <"$TMP/want"
	else
		klog-produce -q -b "$SRC" -t T <"$TMP/want"
	fi
	DST=127.0.0.1:$(free_port)
	klog-serve -q -d "$TMP/dst" -l "$DST" --topic "T:$2" 2>>"$TMP/dst.log" &
	dstpid=$!
	PIDS+=("$dstpid")
	wait_port "${DST##*:}" 5
	if [ "${3:-}" = other ]; then
		paced "$TMP/want" | klog-produce -q -b "$DST" -t T --idempotent &
		OTHER=$!
		PIDS+=("$OTHER")
	fi
	for i in 1 2 3 4; do
		mirror_run "$i"
		[ "$i" = 4 ] && break
		# Killed once it has begun (its records of earlier runs
		# found) and the positions passed the step.
		n=600
		until [ "$(grep -c 'records of earlier runs' "$TMP/prod.err")" \
			-ge "$i" ] && [ "$(settled)" -ge $((i * 60000)) ]; do
			n=$((n - 1))
			[ "$n" -gt 0 ]
			sleep 0.02
		done
		kill -STOP "$dstpid"
		sleep 0.2
		kill -KILL "$CONS" "$PROD"
		wait_gone "$CONS" 5
		wait_gone "$PROD" 5
		kill -CONT "$dstpid"
	done
	wait "$CONS"
	wait "$PROD"
	[ "${3:-}" != other ] || wait "$OTHER"
	grep 'mirror:' "$TMP/prod.err" | sed 's/^/# /' >&3
	[ "$(grep -o 'producer id [0-9]*' "$TMP/prod.err" | sort -u |
		wc -l)" -eq 4 ]
	found=$(grep -o 'mirror: [0-9]* records of earlier' "$TMP/prod.err" |
		awk '{ s += $2 } END { print s + 0 }')
	[ "$found" -gt 0 ]
	klog-consume -b "$DST" -t T -o beginning -e | sort -n | uniq -c |
		awk '{ print $1 }' | sort | uniq -c >"$TMP/counts"
	sed 's/^/# lines copied (count, times): /' "$TMP/counts" >&3
	times=1
	[ "${3:-}" != other ] || times=2
	[ "$(cat "$TMP/counts")" = "$(printf '%7d %d' "$N" "$times")" ]
}

# check_read [SOURCE...]: the topic holds the lines once each, in order;
# read from the broker (or klog-consume's SOURCE options: -Z ...).
check_read() {
	local src=("$@")
	[ $# -gt 0 ] || src=(-b "127.0.0.1:$BROKER_PORT")
	klog-consume "${src[@]}" -t idem -o beginning -e >"$TMP/read"
	sort "$TMP/read" | uniq -d >"$TMP/dups"
	echo "# read $(wc -l <"$TMP/read"), duplicated $(wc -l <"$TMP/dups")" >&3
	[ ! -s "$TMP/dups" ]
	cmp "$TMP/read" "$TMP/want"
}

@test "produce --idempotent: a producer id from INIT_PRODUCER, records in magic-2 entries with sequences; -a 0 refused" {
	start_broker --topic idem:1
	seq 1 10 | klog-produce -v -t idem --idempotent 2>"$TMP/err"
	grep -q '^klog-produce: idempotent: producer id 0, epoch 0$' "$TMP/err"
	seq 11 20 | klog-produce -v -t idem --idempotent 2>"$TMP/err"
	grep -q '^klog-produce: idempotent: producer id 1, epoch 0$' "$TMP/err"
	run -0 klog-dump "$BROKER_DATA/idem-0/00000000000000000000.klog"
	[[ ${lines[0]} == *' magic=2 '*' producer_id=0 producer_epoch=0 base_sequence=0' ]]
	[[ ${lines[1]} == *' magic=2 '*' producer_id=1 producer_epoch=0 base_sequence=0' ]]
	[ "$(klog-consume -t idem -o beginning -e | paste -sd' ')" = "$(seq 1 20 | paste -sd' ')" ]
	run -64 klog-produce -t idem --idempotent -a 0 </dev/null
	[[ $output == *'--idempotent and -a 0 cannot be used together'* ]]
}

@test "produce --idempotent: acknowledgements lost on the way: the batches sent again are answered with their first offsets, not written twice" {
	local at
	RELAY_PORT=$(free_port)
	start_broker --topic idem:1 --advertise "127.0.0.1:$RELAY_PORT"
	start_relay
	produce_bg -b "127.0.0.1:$RELAY_PORT"
	for at in 3000 7000 11000; do
		wait_done "$at"
		lose_answers
	done
	wait "$PROD"
	grep 'resent' "$TMP/producer.err" | sed 's/^/# /' >&3
	# Batches went again, and none was written twice.
	grep -q ' [1-9][0-9]* resent' "$TMP/producer.err"
	check_read
}

@test "produce --idempotent: the broker killed -9 twice mid-stream, with batches written and not acknowledged: nothing lost, nothing twice, in order" {
	local at
	RELAY_PORT=$(free_port)
	start_broker --topic idem:1 --advertise "127.0.0.1:$RELAY_PORT"
	start_relay
	produce_bg -b "127.0.0.1:$RELAY_PORT"
	for at in 4000 11000; do
		wait_done "$at"
		# Answers swallowed, then the kill: the restarted broker
		# knows the batches sent again from its log.
		touch "$TMP/drop"
		sleep 0.15
		kill -KILL "$BROKER_PID"
		wait_gone "$BROKER_PID" 5
		start_broker --topic idem:1 --advertise "127.0.0.1:$RELAY_PORT"
	done
	wait "$PROD"
	grep 'resent' "$TMP/producer.err" | sed 's/^/# /' >&3
	grep -q ' [1-9][0-9]* resent' "$TMP/producer.err"
	check_read
	# Each restart rebuilt the producer's state from the log.
	[ "$(grep -c 'producer state: 0 snapshots unreadable' "$TMP/broker.log")" -ge 2 ]
}

@test "produce --idempotent: a replicated partition's leader killed -9 mid-stream: the new leader knows the producer from what it copied; nothing lost, nothing twice, in order" {
	local leader id
	start_zk
	ZKC="$ZK/rep"
	# A leader flushes 300 ms after its last append, its followers at
	# once: batches are copied while their acknowledgement waits, so the
	# kill leaves the new leader holding batches the producer sends again.
	for id in 1 2 3; do
		start_zk_broker "$id" --zk-session-timeout 2000 --flush-ms 300 \
		    --replica-lag-time 3s
	done
	klog-group -Z "$ZKC" -H create-topic -t idem --partitions 1 \
		--replication-factor 3 --min-insync-replicas 2 >/dev/null
	leader=
	until [ -n "$leader" ] && [ "$leader" -ge 0 ]; do
		sleep 0.1
		leader=$(klog-group -Z "$ZKC" -H -J topics -t idem | jq -r .leader)
	done
	produce_bg -Z "$ZKC" -a all
	wait_done 6000
	kill -KILL "${BROKER_PIDS[$leader]}"
	wait "$PROD"
	grep 'resent\|acknowledged' "$TMP/producer.err" | sed 's/^/# /' >&3
	check_read -Z "$ZKC"
	# The new leader took the producer's next batch: it knew the producer
	# from what it had copied.
	! grep -q 'refused' "$TMP"/broker-[123].log
	stop_zk
}

@test "produce --idempotent: a mirror killed -9 three times with its requests written and unanswered: each run a new producer id, nothing lost, nothing twice" {
	mirror_killed 1 1
}

@test "produce --idempotent: a mirror of 2 partitions into 2, killed -9 three times: nothing lost, nothing twice" {
	mirror_killed 2 2
}

@test "produce --idempotent: a mirror of records in batches (headers, timestamps) killed -9 three times inside batches: nothing lost, nothing twice" {
	mirror_killed 2 1 records
	# The records came with their headers.
	[ "$(klog-consume -b "$DST" -t T -o beginning -e -f '%h\n' |
		sort -u)" = via=src ]
}

@test "produce --idempotent: a mirror killed -9 three times while another producer writes the same lines to the destination: its records are not taken for the mirror's" {
	mirror_killed 1 2 other
}
