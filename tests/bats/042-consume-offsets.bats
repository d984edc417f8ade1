#!/usr/bin/env bats
# klog-consume -o: offsets past the end or before the start, honouring
# --reset the same with and without -e; the last N messages (-o -N); times
# (-o s@TIME).

bats_require_minimum_version 1.5.0
load helpers

setup() {
	common_setup
}

teardown() {
	common_teardown
}

@test "offsets: past the end: --reset fail says so, with and without -e" {
	start_broker
	seq 1 3 | klog-produce -t o -a all
	run -1 --separate-stderr klog-consume -t o -o 999999999 -e --reset fail
	[ "$stderr" = 'klog-consume: offset 999999999 is past the end (30) of o/0' ]
	[ -z "$output" ]
	run -1 --separate-stderr klog-consume -t o -o 999999999 --reset fail
	[ "$stderr" = 'klog-consume: offset 999999999 is past the end (30) of o/0' ]
	[ -z "$output" ]
}

@test "offsets: past the end: earliest (default) and latest, with and without -e" {
	start_broker
	seq 1 3 | klog-produce -t o -a all
	run -0 --separate-stderr klog-consume -t o -o 999999999 -e
	[ "$output" = "1
2
3" ]
	[ "$stderr" = 'klog-consume: offset 999999999 is past the end (30) of o/0; going on from 0 (--reset earliest)' ]
	run -0 --separate-stderr klog-consume -t o -o 999999999 -c 3
	[ "$output" = "1
2
3" ]
	[ "$stderr" = 'klog-consume: offset 999999999 is past the end (30) of o/0; going on from 0 (--reset earliest)' ]
	run -0 --separate-stderr klog-consume -t o -o 999999999 -e --reset latest
	[ -z "$output" ]
	[ "$stderr" = 'klog-consume: offset 999999999 is past the end (30) of o/0; going on from 30 (--reset latest)' ]
	# Without -e, latest follows from the end: the next record is the
	# first one out.
	klog-consume -t o -o 999999999 --reset latest -c 1 -q >"$TMP/out" &
	PIDS+=("$!")
	sleep 0.5
	echo 4 | klog-produce -t o -a all
	wait_gone "${PIDS[-1]}" 5
	[ "$(cat "$TMP/out")" = "4" ]
}

@test "offsets: an empty partition: never negative, the same with and without -e" {
	start_broker --partitions 2
	echo a | klog-produce -t e -p 0 -a all
	run -1 --separate-stderr klog-consume -t e -p 1 -o 5 -e --reset fail
	[ "$stderr" = 'klog-consume: offset 5 is past the end (0) of e/1' ]
	run -1 --separate-stderr klog-consume -t e -p 1 -o 5 --reset fail
	[ "$stderr" = 'klog-consume: offset 5 is past the end (0) of e/1' ]
	run -0 --separate-stderr klog-consume -t e -p 1 -o 5 -e
	[ -z "$output" ]
	[ "$stderr" = 'klog-consume: offset 5 is past the end (0) of e/1; going on from 0 (--reset earliest)' ]
	run -0 --separate-stderr klog-consume -t e -p 1 -o 0 -e
	[ -z "$output" ]
	[ -z "$stderr" ]
}

@test "offsets: before the start (retention): --reset, with and without -e" {
	start_broker --segment-bytes 1K --retention-hours off
	# 10 records a request, so that segments roll (1000 to 1399).
	seq 1000 1399 | klog-produce -q -t r --batch 10
	klog-retain -q -d "$BROKER_DATA" --max-bytes 2000 >/dev/null
	# The broker notices the deletion at its next rescan.
	for i in $(seq 50); do
		lo=$(klog-consume -L -t r | cut -f3)
		[ "$lo" -gt 0 ] && break
		sleep 0.2
	done
	[ "$lo" -gt 0 ]
	run -1 --separate-stderr klog-consume -t r -o 0 -e --reset fail
	[ "$stderr" = "klog-consume: offset 0 is before the start ($lo) of r/0" ]
	run -1 --separate-stderr klog-consume -t r -o 0 --reset fail
	[ "$stderr" = "klog-consume: offset 0 is before the start ($lo) of r/0" ]
	run -0 --separate-stderr klog-consume -t r -o 0 -c 1
	[ "$stderr" = "klog-consume: offset 0 is before the start ($lo) of r/0; going on from $lo (--reset earliest)" ]
	[ "$output" -gt 1000 ]
}

@test "offsets: -o s@TIME takes a UTC time as klog-group does, or ms" {
	start_broker
	seq 1 3 | klog-produce -t t -a all
	# Every segment is newer than 2000: from the beginning.
	run -0 klog-consume -t t -o s@2000-01-01T00:00:00Z -e
	[ "$output" = "1
2
3" ]
	run -0 klog-consume -t t -o s@946684800000 -e
	[ "${#lines[@]}" -eq 3 ]
	# Later than every write: the end.
	run -0 klog-consume -t t -o s@2099-01-01T00:00:00Z -e
	[ -z "$output" ]
	run -0 klog-consume -t t -o s@2099-01-01T00:00:00 -e
	[ -z "$output" ]
	run -64 --separate-stderr klog-consume -t t -o s@2026-11-29 -e
	[ "${stderr_lines[0]}" = "klog-consume: -o s@2026-11-29: want ms since the epoch or YYYY-MM-DDTHH:MM:SSZ" ]
}

@test "offsets: -o -N gives the last N messages of each partition, across segments" {
	start_broker --segment-bytes 1K --partitions 2
	# 10 records a request (3-digit payloads, 12-byte entries), so that
	# segments of about 960 bytes roll: 80 to a segment.
	seq -f '%03g' 1 300 | klog-produce -q -t n -p 0 --batch 10
	seq -f '%03g' 501 505 | klog-produce -q -t n -p 1
	[ "$(ls "$BROKER_DATA/n-0" | wc -l)" -ge 4 ]
	run -0 klog-consume -t n -p 0 -o -5 -e
	[ "$output" = "296
297
298
299
300" ]
	run -0 klog-consume -t n -p 0 -o -1 -e
	[ "$output" = "300" ]
	# More than the newest segment holds: it steps back.
	run -0 klog-consume -t n -p 0 -o -150 -e
	[ "${#lines[@]}" -eq 150 ]
	[ "${lines[0]}" = "151" ]
	# More than the partition holds: all of it.
	run -0 klog-consume -t n -p 0 -o -1000 -e
	[ "${#lines[@]}" -eq 300 ]
	[ "${lines[0]}" = "001" ]
	# Each partition read gives its own last N.
	run -0 klog-consume -t n -o -2 -e -f '%p %s\n'
	[ "$(sort <<<"$output")" = "0 299
0 300
1 504
1 505" ]
	# Without -e it follows on from there.
	klog-consume -t n -p 1 -o -1 -c 2 >"$TMP/out" &
	PIDS+=("$!")
	sleep 0.5
	echo 506 | klog-produce -q -t n -p 1 -a all
	wait_gone "${PIDS[-1]}" 5
	[ "$(cat "$TMP/out")" = "505
506" ]
}

@test "offsets: -o -N on an empty partition is nothing; -o -0 is a usage error" {
	start_broker --partitions 2
	echo a | klog-produce -q -t m -p 0 -a all
	run -0 --separate-stderr klog-consume -t m -p 1 -o -3 -e
	[ -z "$output" ]
	[ -z "$stderr" ]
	run -0 klog-consume -t m -o -3 -e
	[ "$output" = "a" ]
	run -64 --separate-stderr klog-consume -t m -o -0 -e
	[[ "${stderr_lines[0]}" == "klog-consume: -o -N 0: "* ]]
	run -64 --separate-stderr klog-consume -t m -o -x -e
	[[ "${stderr_lines[0]}" == "klog-consume: -o -N x: "* ]]
}
