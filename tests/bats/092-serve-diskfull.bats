#!/usr/bin/env bats
# klog-serve when the disk fills up: produce requests fail with DISK_FULL,
# what was acknowledged before stays whole and readable, the broker keeps
# serving reads, and appends work again once there is room.  Two ways to
# run out: a file size limit (RLIMIT_FSIZE, which also raises SIGXFSZ) and,
# where this sandbox lets root mount one, a small tmpfs.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	common_setup
	MNT=
}

teardown() {
	local pid
	if [ -n "$MNT" ]; then
		# The broker must let go of the file system before it goes.
		for pid in "${PIDS[@]}"; do
			kill -KILL "$pid" 2>/dev/null
			wait_gone "$pid" 5
		done
		umount "$MNT" 2>/dev/null || umount -l "$MNT"
	fi
	common_teardown
}

# limited_broker BLOCKS ARGS...: klog-serve under a soft `ulimit -f BLOCKS`
# (KiB), which prlimit can lift again.
limited_broker() {
	local blocks=$1
	shift
	BROKER_PORT=$(free_port)
	BROKER_DATA=$TMP/broker-data
	export KLOG_BROKERS="127.0.0.1:$BROKER_PORT"
	(ulimit -S -f "$blocks" && exec klog-serve -d "$BROKER_DATA" \
		-l "$KLOG_BROKERS" "$@") 2>>"$TMP/broker.log" &
	BROKER_PID=$!
	PIDS+=("$BROKER_PID")
	wait_port "$BROKER_PORT" 5
}

# wait_log REGEX: until the broker's log has a matching line.
wait_log() {
	local n=100
	until grep -q "$1" "$TMP/broker.log"; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.05
	done
}

# check_subsequence OUT IN: every line of OUT is a line of IN, in IN's
# order, none twice.
check_subsequence() {
	python3 - "$1" "$2" <<-'EOF'
	import sys
	out = open(sys.argv[1], "rb").read().split(b"\n")[:-1]
	pos = {l: i for i, l in enumerate(open(sys.argv[2], "rb").read().split(b"\n"))}
	last = -1
	for l in out:
	    assert l in pos, "not produced: %r" % l
	    assert pos[l] > last, "out of order or repeated: %r" % l
	    last = pos[l]
	EOF
}

@test "disk full: a file size limit fails appends with DISK_FULL; the broker lives on" {
	limited_broker 64
	seq -f 'early%06g' 1 1000 | klog-produce -t f -a all
	# 300000 records of 7 bytes (16-byte entries) cannot fit in 64 KiB.
	seq -f '%06g' 1 300000 >"$TMP/in"
	run -1 --separate-stderr klog-produce -t f -a all <"$TMP/in"
	[[ "$stderr" == *'topic "f" partition 0: DISK_FULL'* ]]
	[[ "$stderr" == *" records acknowledged, "*" not"* ]]
	acked=$(sed -n 's/^klog-produce: \([0-9]*\) of 300000 records acknowledged.*/\1/p' <<<"$stderr")
	# The broker is still there (SIGXFSZ does not end it), says why, and
	# serves what it acknowledged: nothing more, nothing damaged.
	kill -0 "$BROKER_PID"
	grep -q '^klog-serve: error: topic "f" partition 0: append: write .*: File too large$' "$TMP/broker.log"
	klog-consume -t f -o beginning -e >"$TMP/out"
	[ "$(head -n 1000 "$TMP/out")" = "$(seq -f 'early%06g' 1 1000)" ]
	tail -n +1001 "$TMP/out" >"$TMP/rest"
	[ "$(wc -l <"$TMP/rest")" -eq "$acked" ]
	check_subsequence "$TMP/rest" "$TMP/in"
	run -0 klog-dump --verify "$BROKER_DATA/f-0"
	[ "$(stat -c %s "$BROKER_DATA"/f-0/*.klog)" -le 65536 ]
	# Room again: the limit lifted on the running broker.
	prlimit --pid "$BROKER_PID" --fsize=unlimited
	seq -f 'late%06g' 1 1000 | klog-produce -t f -a all
	run -0 klog-consume -t f -o beginning -e
	[ "${#lines[@]}" -eq $((2000 + acked)) ]
	[ "${lines[-1]}" = "late001000" ]
	grep -q 'topic "f" partition 0: appending again' "$TMP/broker.log"
	kill -TERM "$BROKER_PID"
	wait "$BROKER_PID"
	run -0 klog-dump --verify "$BROKER_DATA/f-0"
}

@test "disk full: a full tmpfs fails appends with DISK_FULL; freeing space mends it" {
	MNT=$TMP/mnt
	mkdir "$MNT"
	mount -t tmpfs -o size=1m tmpfs "$MNT" 2>/dev/null || {
		MNT=
		skip "cannot mount a tmpfs here"
	}
	# Leave about 200 KiB free beside a filler file.
	head -c $((800 * 1024)) /dev/zero >"$MNT/filler"
	BROKER_DATA=$MNT/data
	start_broker --segment-bytes 64K
	seq -f 'early%06g' 1 1000 | klog-produce -t f -a all
	seq -f '%06g' 1 100000 >"$TMP/in"
	run -1 --separate-stderr klog-produce -t f -a all <"$TMP/in"
	[[ "$stderr" == *'topic "f" partition 0: DISK_FULL'* ]]
	acked=$(sed -n 's/^klog-produce: \([0-9]*\) of 100000 records acknowledged.*/\1/p' <<<"$stderr")
	kill -0 "$BROKER_PID"
	grep -q 'No space left on device$' "$TMP/broker.log"
	# Reads go on while the disk is full.
	klog-consume -t f -o beginning -e >"$TMP/out"
	[ "$(head -n 1000 "$TMP/out")" = "$(seq -f 'early%06g' 1 1000)" ]
	tail -n +1001 "$TMP/out" >"$TMP/rest"
	[ "$(wc -l <"$TMP/rest")" -eq "$acked" ]
	check_subsequence "$TMP/rest" "$TMP/in"
	run -0 klog-dump --verify "$BROKER_DATA/f-0"
	# Room again.
	rm "$MNT/filler"
	seq -f 'late%06g' 1 1000 | klog-produce -t f -a all
	run -0 klog-consume -t f -o beginning -e
	[ "${#lines[@]}" -eq $((2000 + acked)) ]
	[ "${lines[-1]}" = "late001000" ]
	kill -TERM "$BROKER_PID"
	wait "$BROKER_PID"
	[ -e "$BROKER_DATA/.klog_cleanshutdown" ]
	run -0 klog-dump --verify "$BROKER_DATA/f-0"
}
