#!/usr/bin/env bats
# klog-retain beside a running klog-serve on the same data directory: the
# broker notices the removed segments (it rescans every 5 seconds), fetches
# below the new start are out of range, it keeps serving and keeps no
# descriptor of a deleted file.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	common_setup
	[ -x "$BIN/klog-serve" ] || skip "klog-serve is not built"
	D="$TMP/data"
	PORT="$(free_port)"
	B="127.0.0.1:$PORT"
	# 1 KiB segments; the broker's own retention off, so that every
	# deletion here is klog-retain's.
	klog-serve -q -d "$D" -l "$B" --segment-bytes 1K \
		--retention-hours off 2>"$TMP/serve.log" &
	SERVE_PID=$!
	PIDS+=("$SERVE_PID")
	wait_port "$PORT" 10
}

teardown() {
	common_teardown
}

# produce FIRST LAST: records FIRST..LAST as 3-digit payloads (12-byte
# entries), 10 to a request, so 8 requests (960 bytes) fill a segment.
produce() {
	seq -f '%03g' "$1" "$2" | klog-produce -q -b "$B" -t ev --batch 10
}

# The broker's earliest and latest offsets of ev-0, "START END".
offsets() {
	klog-consume -L -b "$B" -t ev | awk -F '\t' '$2 == 0 { print $3, $4 }'
}

# Until a fetch at offset 0 is out of range: the broker has rescanned.
wait_out_of_range() {
	local n=200
	until ! klog-consume -q -b "$B" -t ev -o 0 -e --reset fail \
		>/dev/null 2>&1; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.05
	done
}

fd_count() {
	ls "/proc/$SERVE_PID/fd" | wc -l
}

# Descriptors of deleted files in the data directory (others, such as a
# test runner's temporary file the broker inherited, are not the broker's).
deleted_fds() {
	ls -l "/proc/$SERVE_PID/fd" | grep -F "$D/" | grep -c '(deleted)' || true
}

@test "live: deleted offsets are out of range, the broker keeps serving" {
	produce 1 400
	[ "$(cd "$D/ev-0" && ls *.klog | wc -l)" -eq 5 ]
	[ "$(offsets)" = "0 4800" ]
	# 4800 bytes: 0 and 960 can go and leave at least 2000.
	run -0 --separate-stderr klog-retain -d "$D" --max-bytes 2000
	[ "$(cut -f1-4 <<<"$output")" = "ev	0	0	960
ev	0	960	960" ]
	[ "$(offsets)" = "1920 4800" ]
	wait_out_of_range
	run -1 --separate-stderr klog-consume -b "$B" -t ev -o 0 -e \
		--reset fail
	[ -z "$output" ]
	[[ "$stderr" == *'offset 0 is before the start (1920) of ev/0' ]]
	run -0 --separate-stderr klog-consume -b "$B" -t ev -o 0 -e
	[ "${#lines[@]}" -eq 240 ]
	[ "${lines[0]}" = 161 ]
	[ "${lines[239]}" = 400 ]
	[[ "$stderr" == *'going on from 1920'* ]]
	# It still takes and serves new messages.
	produce 401 480
	[ "$(offsets)" = "1920 5760" ]
	run -0 klog-consume -b "$B" -t ev -o 5748 -e
	[ "$output" = 480 ]
	kill -0 "$SERVE_PID"
	[ "$(deleted_fds)" -eq 0 ]
	run -0 klog-dump --verify "$D/ev-0"
}

@test "live: repeated runs leave no descriptor behind in the broker" {
	produce 1 400
	run -0 klog-retain -d "$D" --max-bytes 2000
	wait_out_of_range
	base=$(fd_count)
	for i in 1 2 3; do
		# One more full segment, one more deleted.
		produce $((401 + (i - 1) * 80)) $((400 + i * 80))
		run -0 klog-retain -d "$D" --max-bytes 2000
		[ "${#lines[@]}" -eq 1 ]
	done
	[ "$(cd "$D/ev-0" && ls *.klog | wc -l)" -eq 3 ]
	# Once the broker has rescanned, it holds as many as before.
	n=200
	until [ "$(deleted_fds)" -eq 0 ] && [ "$(fd_count)" -le "$base" ]; do
		n=$((n - 1))
		[ "$n" -gt 0 ]
		sleep 0.05
	done
	[ "$(offsets)" = "4800 7680" ]
	run -0 klog-consume -b "$B" -t ev -o beginning -e
	[ "${#lines[@]}" -eq 240 ]
	[ "${lines[0]}" = 401 ]
}

@test "live: retention while a producer writes leaves a whole partition" {
	produce 1 80
	seq -f '%04g' 1 3000 | klog-produce -q -b "$B" -t ev --batch 10 &
	prod=$!
	PIDS+=("$prod")
	while kill -0 "$prod" 2>/dev/null; do
		run klog-retain -q -d "$D" --max-bytes 3000 -w 5s
		[ "$status" -eq 0 ]
		sleep 0.05
	done
	wait "$prod"
	run -0 klog-retain -d "$D" --max-bytes 3000
	# The earliest offset moves at once, before the broker's rescan.
	read -r start end <<<"$(offsets)"
	[ "$end" -eq $((960 + 3000 * 13)) ]
	[ $((end - start)) -ge 3000 ]
	# Every message from the start to the end, in order, nothing else.
	run -0 --separate-stderr klog-consume -b "$B" -t ev -o beginning -e
	[ "${lines[-1]}" = 3000 ]
	[ "$(printf '%s\n' "${lines[@]}" | sort -c -n && echo sorted)" = sorted ]
	run -0 klog-dump --verify "$D/ev-0"
}

# Issue 18 #1: after a restart, the broker has no descriptor of a segment
# it has not read yet; one deleted behind it then failed the fetch with
# the old range, and the consumer went back to offset 0, whose segment was
# still open: records delivered twice.  The fetch now moves the start past
# the deleted files before it answers, and the consumer goes forward.
@test "retain live: a segment deleted after a restart sends the consumer forward, never back to 0" {
	produce 1 800
	kill -TERM "$SERVE_PID"
	wait_gone "$SERVE_PID" 10
	klog-serve -q -d "$D" -l "$B" --segment-bytes 1K \
		--retention-hours off 2>>"$TMP/serve.log" &
	SERVE_PID=$!
	PIDS+=("$SERVE_PID")
	wait_port "$PORT" 10
	# The first segment is read, so the broker holds it open; the
	# seventh (5760) has not been.
	run -0 klog-consume -b "$B" -t ev -o beginning -c 5
	[ "${lines[0]}" = "001" ]
	[ -e "$D/ev-0/00000000000000005760.klog" ]
	klog-retain -q -d "$D" --max-bytes 1K >/dev/null
	[ ! -e "$D/ev-0/00000000000000005760.klog" ]
	run -0 --separate-stderr klog-consume -b "$B" -t ev -o 5760 -e
	# Forward, to the start after the deletion; nothing from the first
	# segment again.
	start=$(offsets | cut -d' ' -f1)
	[ "$start" -gt 5760 ]
	grep -q "before the start ($start) of ev/0; going on from $start (--reset earliest)$" <<<"$stderr"
	[ "${lines[0]}" = "$(printf '%03d' $((start / 12 + 1)))" ]
}
