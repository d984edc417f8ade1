#!/usr/bin/env bats
# klog-produce --idempotent (klog-produce(1), IDEMPOTENCE): a producer id
# from INIT_PRODUCER (klog-protocol(7)), every batch a magic-2 entry with
# its sequence, resent byte for byte.  Acknowledgements lost through a
# relay (ackdrop.py) and a broker killed -9 mid-stream: nothing lost,
# nothing twice, in order.  A mirror whose producer is idempotent killed
# -9 three times: each restart has a new id, nothing is lost.

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

# check_read: the topic holds the lines once each, in order.
check_read() {
	klog-consume -b "127.0.0.1:$BROKER_PORT" -t idem -o beginning -e \
		>"$TMP/read"
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

@test "produce --idempotent: a mirror killed -9 three times: each run a new producer id, the bookmark held, nothing lost" {
	local src dst f=$TMP/mirror.offsets i n dup end fill
	start_broker --topic T:1
	src=$KLOG_BROKERS
	seq 1 "$N" >"$TMP/want"
	paced "$TMP/want" | klog-produce -q -b "$src" -t T &
	fill=$!
	PIDS+=("$fill")
	dst=127.0.0.1:$(free_port)
	klog-serve -q -d "$TMP/dst" -l "$dst" --topic T:1 2>>"$TMP/dst.log" &
	PIDS+=("$!")
	wait_port "${dst##*:}" 5
	for i in 1 2 3 4; do
		rm -f "$TMP/pipe"
		mkfifo "$TMP/pipe"
		# The last run stops at the source's end.
		end=()
		[ "$i" = 4 ] && wait "$fill" && end=(-e)
		klog-consume -q -b "$src" -t T -J --offsets-from "$f" \
			"${end[@]}" >"$TMP/pipe" 2>>"$TMP/cons.err" &
		CONS=$!
		klog-produce -v -b "$dst" -t T -J --idempotent --batch 200 \
			--source-offset-file "$f" <"$TMP/pipe" \
			2>>"$TMP/prod.err" &
		PROD=$!
		PIDS+=("$CONS" "$PROD")
		[ "$i" = 4 ] && break
		# Killed while it copies: past the bookmark's first save.
		n=600
		until [ -s "$f" ] && [ "$(klog-consume -b "$dst" -t T -o beginning -e | wc -l)" -ge $((i * 3000)) ]; do
			n=$((n - 1))
			[ "$n" -gt 0 ]
			sleep 0.02
		done
		kill -KILL "$CONS" "$PROD"
		wait_gone "$CONS" 5
		wait_gone "$PROD" 5
	done
	wait "$CONS"
	wait "$PROD"
	[ "$(grep -c 'idempotent: producer id' "$TMP/prod.err")" -eq 4 ]
	[ "$(grep -o 'producer id [0-9]*' "$TMP/prod.err" | sort -u | wc -l)" -eq 4 ]
	klog-consume -b "$dst" -t T -o beginning -e >"$TMP/all"
	sort -n -u "$TMP/all" | cmp - <(seq 1 "$N")
	dup=$(($(wc -l <"$TMP/all") - N))
	echo "# $dup records copied twice (a new producer id each run)" >&3
}
