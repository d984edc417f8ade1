#!/usr/bin/env bats
# klog-produce | broker | klog-consume round trips: a million lines, binary
# payloads through -0 and through -J, gzip batches.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	common_setup
}

teardown() {
	common_teardown
}

@test "pipeline: 1,000,000 lines in, the same 1,000,000 lines out" {
	start_broker
	seq 1000000 | klog-produce -t big
	klog-consume -t big -o beginning -e >"$TMP/out"
	cmp "$TMP/out" <(seq 1000000)
	# Offsets are byte positions: the end is the sum of entry sizes.
	run -0 klog-consume -L -t big
	[ "$output" = "big	0	0	14888896" ]
}

@test "pipeline: binary records with NUL delimiters (-0 / -D '\\0')" {
	start_broker
	head -c 200000 /dev/urandom >"$TMP/rand"
	printf '\0' >>"$TMP/rand"
	klog-produce -t bin -0 <"$TMP/rand"
	klog-consume -t bin -o beginning -e -D '\0' >"$TMP/out"
	cmp "$TMP/rand" "$TMP/out"
}

@test "pipeline: -J out, -J in: binary payloads survive byte for byte" {
	start_broker
	head -c 100000 /dev/urandom >"$TMP/rand"
	printf '\0plain text\0\0caf\xc3\xa9 "q"\\\0' >>"$TMP/rand"
	klog-produce -t src -0 <"$TMP/rand"
	klog-consume -t src -o beginning -e -J >"$TMP/json"
	jq -e . "$TMP/json" >/dev/null
	grep -q '"payload":"plain text"' "$TMP/json"
	grep -q '"payload_base64":' "$TMP/json"
	klog-produce -t dst -J <"$TMP/json"
	cmp <(klog-consume -t src -o beginning -e -D '\0') \
		<(klog-consume -t dst -o beginning -e -D '\0')
	cmp "$TMP/rand" <(klog-consume -t dst -o beginning -e -D '\0')
}

@test "pipeline: -J input that is not an envelope: earlier records sent, exit 65" {
	start_broker
	# Blank lines are no records: the number counts records (it said
	# "record 4" here, counting lines).
	printf '{"payload":"ok"}\n\n  \nnot json\n{"payload":"never"}\n' >"$TMP/in"
	run -65 --separate-stderr klog-produce -t bad -J <"$TMP/in"
	[ "$stderr" = "klog-produce: record 2: not a JSON object of scalars and headers" ]
	run -0 klog-consume -t bad -o beginning -e
	[ "$output" = "ok" ]
}

@test "pipeline: -J input cut inside its last envelope: earlier records sent, exit 65, said so" {
	start_broker
	# What a writer killed by kill -9 leaves in a pipe.  A last envelope
	# whole but with no newline is a record.
	printf '{"payload":"ok"}\n{"payload":"whole"}' >"$TMP/in"
	run -0 klog-produce -q -t cut -J <"$TMP/in"
	printf '{"payload":"ok"}\n{"paylo' >"$TMP/in"
	run -65 --separate-stderr klog-produce -t cut -J <"$TMP/in"
	[ "$stderr" = "klog-produce: record 2: the input ends inside it, with no newline (did its writer die?)" ]
	run -0 klog-consume -t cut -o beginning -e
	[ "$output" = "$(printf 'ok\nwhole\nok')" ]
}

@test "pipeline: gzip batches round trip; inner messages share the wrapper's offset" {
	start_broker
	# From a file, stdin never runs dry: every batch is full.
	seq 100000 >"$TMP/in"
	klog-produce -t gz -z gzip --batch 500 <"$TMP/in"
	cmp <(klog-consume -t gz -o beginning -e) "$TMP/in"
	# 200 wrappers of 500 messages: 200 distinct offsets.
	[ "$(klog-consume -t gz -o beginning -e -f '%o\n' | sort -u | wc -l)" -eq 200 ]
	# Smaller than the plain topic (each message's CRC, inside, does not
	# compress).
	klog-produce -t plain <"$TMP/in"
	local gz plain
	gz=$(klog-consume -L -t gz | cut -f4)
	plain=$(klog-consume -L -t plain | cut -f4)
	[ $(( gz * 3 )) -lt $(( plain * 2 )) ]
	# Resuming after an inner message re-reads its wrapper (501..1000).
	off=$(klog-consume -t gz -o beginning -e -f '%o %O %s\n' | awk '$3 == 999 {print $2}')
	run -0 klog-consume -t gz -o "$off" -c 1
	[ "$output" = "501" ]
}

@test "pipeline: acks all round trip" {
	start_broker
	seq 20000 | klog-produce -t all -a all --batch 100
	cmp <(klog-consume -t all -o beginning -e) <(seq 20000)
}

@test "pipeline: segments read back from the disk, not the page cache, come out whole" {
	start_broker --segment-bytes 16M
	seq -f 'line %07g of a log that will be read back from the disk' \
		1 1500000 >"$TMP/in"
	klog-produce -q -t cold <"$TMP/in"
	# Out of the page cache: the broker reads it in off its loop.
	drop_pages "$BROKER_DATA/cold-0" || skip "cannot drop pages here"
	[ "$(ls "$BROKER_DATA/cold-0" | wc -l)" -gt 3 ]
	timeout 60 klog-consume -t cold -o beginning -e >"$TMP/out"
	cmp "$TMP/in" "$TMP/out"
	# The disk reads were the prefetch thread's: the event loop started
	# no readahead of its own (read_bytes counts what each thread asked
	# the disk for; its boundary checks may read a page now and then).
	local t loop=-1 pf=-1
	for t in /proc/"$BROKER_PID"/task/*; do
		[ -r "$t/io" ] || skip "no per-thread I/O accounting here"
		case $(cat "$t/comm") in
		klog-serve) loop=$(awk '$1 == "read_bytes:" {print $2}' "$t/io") ;;
		klog-prefetch) pf=$(awk '$1 == "read_bytes:" {print $2}' "$t/io") ;;
		esac
	done
	echo "read_bytes: loop $loop, prefetch $pf"
	[ "$pf" -gt 0 ] || skip "no disk reads were counted"
	[ $(( loop * 100 )) -lt "$pf" ]
}

@test "pipeline: cold reads are paced by --cold-read-rate while anything is appended, whatever the flush policy" {
	# Flushes by count only, never reached by the trickle below: the
	# pacing must follow the appends, not the flushes.
	start_broker --flush-messages 1000000 --cold-read-rate 1M
	seq -f 'line %07g of a log that will be read back from the disk' \
		1 60000 >"$TMP/in"
	klog-produce -q -a all -t cold <"$TMP/in"
	(while :; do echo tick; sleep 0.05; done |
		klog-produce -q -t trickle --linger 1ms) &
	PIDS+=("$!")
	sleep 0.3
	drop_pages "$BROKER_DATA/cold-0" || skip "cannot drop pages here"
	local t0 t1
	t0=$(date +%s%N)
	timeout 60 klog-consume -t cold -o beginning -e >"$TMP/out"
	t1=$(date +%s%N)
	cmp "$TMP/in" "$TMP/out"
	# 4.2 MB at 1 MiB a second: about 4 s (unpaced, well under 1 s).
	echo "read in $(( (t1 - t0) / 1000000 )) ms"
	[ $(( (t1 - t0) / 1000000 )) -ge 2000 ]
}

# Issue 16: progress on long work: a file into klog-produce, a catch-up of
# klog-consume -e; on stderr with --progress (or a terminal), never in a
# pipe without it, never with -q.
@test "pipeline: --progress of a file into klog-produce and of klog-consume -e" {
	start_broker
	seq 100000 >"$TMP/in"
	run -0 --separate-stderr klog-produce -t prog --progress <"$TMP/in"
	[[ $stderr == "klog-produce: stdin: "*" of 589 KB ("*"%), "*" records"* ]]
	run -0 --separate-stderr klog-produce -t prog2 <"$TMP/in"
	[ -z "$stderr" ]
	# A pipe has no end to measure by.
	run -0 --separate-stderr bash -c "seq 10 | klog-produce -t prog3 --progress"
	[ -z "$stderr" ]
	run -0 --separate-stderr klog-consume -t prog -o beginning -e --progress
	[ "${#lines[@]}" -eq 100000 ]
	[[ $stderr == "klog-consume: prog: 10 B of 1.4 MB (0%), 1 messages"* ]]
	run -0 --separate-stderr klog-consume -t prog -o beginning -e --progress -q
	[ -z "$stderr" ]
	run -0 --separate-stderr klog-consume -t prog -o beginning -e
	[ -z "$stderr" ]
}
