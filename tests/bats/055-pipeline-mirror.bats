#!/usr/bin/env bats
# A mirror between two brokers made of the two tools in one pipe (klog(7),
# doc/mirroring.md): klog-consume --offsets-from F | klog-produce
# --source-offset-file F.  The bookmark F only moves past what the
# destination acknowledged, across kill -9 of either process or either
# broker: every source record ends up in the destination, at least once.

bats_require_minimum_version 1.5.0
load helpers

N=60000

setup() {
	common_setup
	SRC_PORT=$(free_port)
	DST_PORT=$(free_port)
	SRC=127.0.0.1:$SRC_PORT
	DST=127.0.0.1:$DST_PORT
	F=$TMP/mirror.offsets
	start_src
	start_dst
}

teardown() {
	common_teardown
}

# start_src, start_dst: (again, after a kill) on the same port and data.
start_src() {
	klog-serve -q -d "$TMP/src" -l "$SRC" --topic T:3 2>>"$TMP/src.log" &
	SRC_PID=$!
	PIDS+=("$SRC_PID")
	wait_port "$SRC_PORT" 10
}

start_dst() {
	klog-serve -q -d "$TMP/dst" -l "$DST" --topic T:2 2>>"$TMP/dst.log" &
	DST_PID=$!
	PIDS+=("$DST_PID")
	wait_port "$DST_PORT" 10
}

# trickle: records 1..N into the source in 30 slices 0.05 s apart, so
# that the mirror is killed while records still come.  A slice refused
# while the source broker is down is sent again (the source may then hold
# some records twice).
trickle() {
	local step=$((N / 30)) i n
	for (( i = 1; i <= N; i += step )); do
		n=100
		until seq "$i" $((i + step - 1 < N ? i + step - 1 : N)) |
			klog-produce -q -b "$SRC" -t T 2>/dev/null; do
			n=$((n - 1))
			[ "$n" -gt 0 ] || return 1
			sleep 0.1
		done
		sleep 0.05
	done
}

# start_mirror [consumer options]: the pipe, with each side's pid.
start_mirror() {
	rm -f "$TMP/pipe"
	mkfifo "$TMP/pipe"
	klog-consume -q -b "$SRC" -t T -J --offsets-from "$F" "$@" \
		>"$TMP/pipe" 2>>"$TMP/cons.err" &
	CONS=$!
	klog-produce -q -b "$DST" -t T -J --source-offset-file "$F" \
		<"$TMP/pipe" 2>>"$TMP/prod.err" &
	PROD=$!
	PIDS+=("$CONS" "$PROD")
}

# Until the bookmark exists: the destination acknowledged something.
wait_bookmark() {
	local n=100
	until [ -s "$F" ]; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.05
	done
}

# The guarantee: every source record before the bookmark of its
# partition is in the destination.
bookmark_held() {
	local topic part off
	klog-consume -b "$DST" -t T -o beginning -e | sort -u >"$TMP/got"
	grep -v '^#' "$F" | while read -r topic part off; do
		klog-consume -b "$SRC" -t T -p "$part" -o beginning -e \
			-f '%O %s\n' | awk -v off="$off" '$1 <= off { print $2 }'
	done | sort -u >"$TMP/want"
	[ -s "$TMP/want" ]
	[ -z "$(comm -23 "$TMP/want" "$TMP/got")" ]
}

# Records in the destination now, fewer than N: the kill to come lands
# while the mirror is copying.
mid_copy() {
	local n
	n=$(klog-consume -b "$DST" -t T -o beginning -e | wc -l)
	[ "$n" -gt 0 ] && [ "$n" -lt "$N" ]
}

# Stop what is left of the mirror cleanly, check the bookmark, finish the
# copy with a mirror that stops at the end, and compare.
finish() {
	local dup
	kill -TERM "$CONS" "$PROD" 2>/dev/null || true
	wait_gone "$CONS" 10
	wait_gone "$PROD" 40
	bookmark_held
	start_mirror -e
	wait "$CONS"
	wait "$PROD"
	klog-consume -b "$DST" -t T -o beginning -e | sort -n >"$TMP/all"
	sort -n -u "$TMP/all" | cmp - <(seq 1 "$N")
	dup=$(($(wc -l <"$TMP/all") - N))
	echo "# $dup records copied twice" >&3
	# A last run finds nothing more to copy.
	start_mirror -e
	wait "$CONS"
	wait "$PROD"
	[ "$(klog-consume -b "$DST" -t T -o beginning -e | wc -l)" -eq $((N + dup)) ]
}

@test "mirror: a run to the end copies everything once, and the bookmark is the source's end" {
	seq 1 "$N" | klog-produce -q -b "$SRC" -t T
	start_mirror -e
	wait "$CONS"
	wait "$PROD"
	klog-consume -b "$DST" -t T -o beginning -e | sort -n | cmp - <(seq 1 "$N")
	[ "$(grep -v '^#' "$F" | cut -f 3 | paste -sd' ')" = \
	    "$(klog-consume -L -b "$SRC" -t T | cut -f 4 | paste -sd' ')" ]
	# -o wins over the file, which klog-consume never writes.
	cp "$F" "$TMP/before"
	run -0 klog-consume -b "$SRC" -t T -J --offsets-from "$F" -o beginning -e -c 1
	cmp "$F" "$TMP/before"
}

@test "mirror: kill -9 of the consumer" {
	trickle &
	PIDS+=("$!")
	local tr=$!
	start_mirror
	wait_bookmark
	sleep 0.3
	mid_copy
	kill -KILL "$CONS"
	# The producer sees the end of its input, drains and saves.
	wait_mirror_producer "$PROD" "$TMP/prod.err"
	bookmark_held
	wait "$tr"
	finish
}

@test "mirror: kill -9 of the producer" {
	trickle &
	PIDS+=("$!")
	local tr=$!
	start_mirror
	wait_bookmark
	sleep 0.3
	mid_copy
	kill -KILL "$PROD"
	# The consumer's reader is gone: it ends.
	wait_gone "$CONS" 10
	bookmark_held
	wait "$tr"
	finish
}

@test "mirror: kill -9 of the producer and the destination with records not acknowledged" {
	trickle &
	PIDS+=("$!")
	local tr=$!
	start_mirror
	wait_bookmark
	sleep 0.3
	mid_copy
	# A stopped destination reads nothing and acknowledges nothing: the
	# producer goes on taking records.  Killed then, with the broker,
	# the records it sent are lost, and the bookmark must not pass them.
	kill -STOP "$DST_PID"
	sleep 1
	kill -KILL "$PROD"
	wait_gone "$CONS" 10
	kill -KILL "$DST_PID"
	wait "$DST_PID" || true
	start_dst
	bookmark_held
	wait "$tr"
	finish
}

@test "mirror: kill -9 of the source broker" {
	trickle &
	PIDS+=("$!")
	local tr=$!
	start_mirror
	wait_bookmark
	sleep 0.3
	mid_copy
	kill -KILL "$SRC_PID"
	wait "$SRC_PID" || true
	sleep 0.5
	start_src
	wait "$tr"
	# The mirror went on through the restart.
	kill -0 "$CONS"
	kill -0 "$PROD"
	finish
}

@test "mirror: kill -9 of the destination broker" {
	trickle &
	PIDS+=("$!")
	local tr=$!
	start_mirror
	wait_bookmark
	sleep 0.3
	mid_copy
	kill -KILL "$DST_PID"
	wait "$DST_PID" || true
	sleep 0.5
	start_dst
	wait "$tr"
	kill -0 "$CONS"
	kill -0 "$PROD"
	finish
}

@test "mirror: --source-offset-file needs -J and acknowledgements; --offsets-from is read only" {
	run -64 --separate-stderr klog-produce -b "$DST" -t T --source-offset-file "$F"
	[ "${stderr_lines[0]}" = "klog-produce: --source-offset-file needs -J: the positions come from the envelopes" ]
	run -64 --separate-stderr klog-produce -b "$DST" -t T -J -a 0 --source-offset-file "$F"
	[[ "${stderr_lines[0]}" == "klog-produce: --source-offset-file and -a 0 cannot be used together"* ]]
	run -64 --separate-stderr klog-consume -b "$SRC" -t T --offsets-from "$F" --offset-file "$F"
	[ "${stderr_lines[0]}" = "klog-consume: --offset-file and --offsets-from cannot be used together" ]
	# An envelope without a source position: exit 65, the record named.
	run -65 --separate-stderr klog-produce -b "$DST" -t T -J --source-offset-file "$F" <<<'{"payload":"x"}'
	[ "${stderr_lines[0]}" = "klog-produce: record 1: no topic" ]
	# Envelopes of two topics cannot share one bookmark.
	run -65 --separate-stderr klog-produce -b "$DST" -t T -J --source-offset-file "$F" <<-'EOF2'
	{"topic":"a","partition":0,"next_offset":10,"payload":"x"}
	{"topic":"b","partition":0,"next_offset":10,"payload":"y"}
	EOF2
	[ "${stderr_lines[0]}" = 'klog-produce: record 2: topic "b", but the records before were of "a"' ]
	[ "$(grep -v '^#' "$F")" = "a	0	10" ]
	# A bookmark that cannot be saved ends the run with 74.
	run -74 --separate-stderr klog-produce -b "$DST" -t T -J --source-offset-file "$TMP/none/F" <<<'{"topic":"T","partition":0,"next_offset":5,"payload":"x"}'
	[[ "${stderr_lines[0]}" == "klog-produce: $TMP/none/F.tmp."*": No such file or directory" ]]
	# A file that does not parse is refused before anything is sent.
	echo "T zero 1" >"$TMP/bad"
	run -65 --separate-stderr klog-produce -b "$DST" -t T -J --source-offset-file "$TMP/bad" </dev/null
	[[ "${stderr_lines[0]}" == "klog-produce: $TMP/bad:1: "* ]]
}
