#!/usr/bin/env bats
# Damaged data directories: garbage at the end of a segment, zero-length
# segments, a missing middle segment, a bit flipped in an old segment.
# The broker starts (or refuses a gap with one clear line), klog-dump
# --verify names the exact offset and byte, and a consumer stops at the
# bad message with exit 65 after writing the good ones before it, never
# garbage.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	common_setup
}

teardown() {
	common_teardown
}

# fill: topic c, 500 records of 4 digits (13-byte entries) in 1 KiB
# segments of 780 bytes (60 entries), then a clean stop.
fill() {
	start_broker --segment-bytes 1K
	seq -f '%04g' 1 500 | klog-produce -t c -a all --batch 20
	stop_broker
}

stop_broker() {
	kill -TERM "$BROKER_PID"
	wait "$BROKER_PID"
}

seg() {
	printf '%s/c-0/%020d.klog' "$BROKER_DATA" "$1"
}

# flip FILE BYTE: flip the low bit of one byte.
flip() {
	python3 -c 'import sys
f, i = sys.argv[1], int(sys.argv[2])
b = bytearray(open(f, "rb").read())
b[i] ^= 1
open(f, "wb").write(b)' "$1" "$2"
}

@test "corrupt: garbage after a clean stop: the marker's end disagrees, recovery cuts it" {
	fill
	# 14 bytes of text: a length field of 0x47415242 ("GARB").
	printf 'GARBAGEGARBAGE' >>"$(seg 6240)"
	run -1 --separate-stderr klog-dump --verify "$BROKER_DATA/c-0"
	[ "$stderr" = "klog-dump: $(seg 6240): offset 6500 (byte 0x104): entry length too large (length field 0x47415242)" ]
	start_broker --segment-bytes 1K
	# The marker says the partition ended at 6500: recovered anyway.
	grep -qF "klog-serve: warn: topic \"c\" partition 0: recovery truncated 14 bytes at offset 6500, kept in $BROKER_DATA/c-0/00000000000000006500.salvage (klog-dump --salvage)" "$TMP/broker.log"
	echo 0501 | klog-produce -t c -a all
	run -0 klog-consume -t c -o beginning -e
	[ "$output" = "$(seq -f '%04g' 1 501)" ]
	stop_broker
	run -0 klog-dump --verify "$BROKER_DATA/c-0"
}

@test "corrupt: garbage after a crash: recovery cuts it and says how much" {
	fill
	rm "$BROKER_DATA/.klog_cleanshutdown"
	printf 'GARBAGEGARBAGE' >>"$(seg 6240)"
	start_broker --segment-bytes 1K
	grep -qF "klog-serve: warn: topic \"c\" partition 0: recovery truncated 14 bytes at offset 6500, kept in $BROKER_DATA/c-0/00000000000000006500.salvage (klog-dump --salvage)" "$TMP/broker.log"
	echo 0501 | klog-produce -t c -a all
	run -0 klog-consume -t c -o beginning -e
	[ "$output" = "$(seq -f '%04g' 1 501)" ]
	stop_broker
	run -0 klog-dump --verify "$BROKER_DATA/c-0"
}

@test "corrupt: a zero-length last segment (a crash right after a roll) is taken as it is" {
	fill
	rm "$BROKER_DATA/.klog_cleanshutdown"
	: >"$(seg 6500)"
	run -0 klog-dump --verify "$BROKER_DATA/c-0"
	start_broker --segment-bytes 1K
	grep -q 'no clean-shutdown marker: recovered 1 partition, 0 bytes truncated' "$TMP/broker.log"
	echo 0501 | klog-produce -t c -a all
	run -0 klog-consume -t c -o 6500 -e
	[ "$output" = "0501" ]
	[ "$(stat -c %s "$(seg 6500)")" -eq 13 ]
}

@test "corrupt: a zero-length or missing middle segment is a gap: refused with one line, 65" {
	fill
	: >"$(seg 1560)"
	run -1 --separate-stderr klog-dump --verify "$BROKER_DATA/c-0"
	[ "$stderr" = "klog-dump: $(seg 2340): offset 2340: gap of 780 bytes after the previous segment, which ends at 1560" ]
	run -65 --separate-stderr klog-serve -l "127.0.0.1:$(free_port)" \
		-d "$BROKER_DATA"
	[ "$stderr" = "klog-serve: $(seg 2340): gap: the previous segment ends at 1560" ]
	rm "$(seg 1560)"
	run -65 --separate-stderr klog-serve -l "127.0.0.1:$(free_port)" \
		-d "$BROKER_DATA"
	[ "$stderr" = "klog-serve: $(seg 2340): gap: the previous segment ends at 1560" ]
	# The refusals changed no segment.
	[ "$(cat "$BROKER_DATA"/c-0/*.klog | wc -c)" -eq $((6500 - 780)) ]
}

@test "corrupt: a bit flip in an old segment: the broker starts, dump and consumer name the offset" {
	fill
	# Entry 2 of the second segment (offset 806) holds "0063"; flip a
	# payload bit: its CRC no longer matches.
	flip "$(seg 780)" 35
	run -1 --separate-stderr klog-dump --verify "$BROKER_DATA/c-0"
	[[ "$stderr" == "klog-dump: $(seg 780): offset 806 (byte 0x1a): crc mismatch (stored 0x"*", computed 0x"* ]]
	start_broker --segment-bytes 1K
	run -65 --separate-stderr klog-consume -t c -o beginning -e
	[ "$output" = "$(seq -f '%04g' 1 62)" ]
	[ "$stderr" = 'klog-consume: topic "c" partition 0: offset 806: crc mismatch' ]
	# A consumer that starts right at the bad message hears the same.
	run -65 --separate-stderr klog-consume -t c -o 806 -e
	[ -z "$output" ]
	[ "$stderr" = 'klog-consume: topic "c" partition 0: offset 806: crc mismatch' ]
	# One inside it is still told it is not a boundary.
	run -1 --separate-stderr klog-consume -t c -o 810 -e
	[[ "$stderr" == *"offset 810 is not a message boundary"* ]]
	# Past the damage everything reads.
	run -0 klog-consume -t c -o 1560 -e
	[ "${#lines[@]}" -eq 380 ]
	[ "${lines[-1]}" = "0500" ]
	# Issue 18 #4: --skip-corrupt warns and goes on at the next message.
	run -0 --separate-stderr klog-consume -t c -o beginning -e --skip-corrupt
	[ "$output" = "$(seq -f '%04g' 1 500 | grep -vx 0063)" ]
	[ "$stderr" = 'klog-consume: topic "c" partition 0: offset 806: crc mismatch; skipped (--skip-corrupt)' ]
}

@test "corrupt: a flipped magic byte or length: the entry cannot be framed, exit 65; --skip-corrupt goes on after it" {
	fill
	cp -a "$BROKER_DATA" "$TMP/copy"
	# The magic byte of the entry at 806: 0 -> 1, so its CRC field is
	# read as attributes, codec 3.
	flip "$(seg 780)" 30
	run -1 --separate-stderr klog-dump --verify "$BROKER_DATA/c-0"
	[[ "$stderr" == "klog-dump: $(seg 780): offset 806 (byte 0x1a): "* ]]
	start_broker --segment-bytes 1K
	run -65 --separate-stderr klog-consume -t c -o beginning -e
	[ "$output" = "$(seq -f '%04g' 1 62)" ]
	[[ "$stderr" == 'klog-consume: topic "c" partition 0: offset 806: '* ]]
	# --skip-corrupt finds its footing at the next whole valid entry.
	run -0 --separate-stderr klog-consume -t c -o beginning -e --skip-corrupt
	[ "$output" = "$(seq -f '%04g' 1 500 | grep -vx 0063)" ]
	[[ "$stderr" == 'klog-consume: topic "c" partition 0: offset 806: '*'; skipped 13 bytes to offset 819 (--skip-corrupt)' ]]
	stop_broker
	# The high bit of the same entry's length: 1 GiB and more.
	rm -rf "$BROKER_DATA"
	cp -a "$TMP/copy" "$BROKER_DATA"
	python3 -c 'import sys
f = sys.argv[1]
b = bytearray(open(f, "rb").read())
b[26] ^= 0x80
open(f, "wb").write(b)' "$(seg 780)"
	run -1 --separate-stderr klog-dump --verify "$BROKER_DATA/c-0"
	[[ "$stderr" == "klog-dump: $(seg 780): offset 806 (byte 0x1a): entry length too large"* ]]
	start_broker --segment-bytes 1K
	run -65 --separate-stderr klog-consume -t c -o beginning -e
	[ "$output" = "$(seq -f '%04g' 1 62)" ]
	[ "$stderr" = 'klog-consume: topic "c" partition 0: offset 806: entry length too large' ]
	run -0 --separate-stderr klog-consume -t c -o beginning -e --skip-corrupt
	[ "$output" = "$(seq -f '%04g' 1 500 | grep -vx 0063)" ]
	[ "$stderr" = 'klog-consume: topic "c" partition 0: offset 806: entry length too large; skipped 13 bytes to offset 819 (--skip-corrupt)' ]
	stop_broker
	# The length's low bit instead, 9 -> 8: the entry seems to end a byte
	# early, inside its own payload, so its CRC fails and what follows
	# does not frame: the next valid entry is looked for, not taken on
	# the broken length's word.
	rm -rf "$BROKER_DATA"
	cp -a "$TMP/copy" "$BROKER_DATA"
	flip "$(seg 780)" 29
	start_broker --segment-bytes 1K
	run -0 --separate-stderr klog-consume -t c -o beginning -e --skip-corrupt
	[ "$output" = "$(seq -f '%04g' 1 500 | grep -vx 0063)" ]
	[ "$stderr" = 'klog-consume: topic "c" partition 0: offset 806: crc mismatch; skipped 13 bytes to offset 819 (--skip-corrupt)' ]
}

# Issue 18 #4: one bad byte in the middle of the active segment.  Kafka
# 0.7's rule stands (the log ends at the first bad message), but the bytes
# cut are kept beside the segment, the log says where, and klog-dump
# --salvage gives back every good message after the damage in the form
# klog-produce -J takes: here all but the one hit.
@test "corrupt: a bad byte mid-segment at recovery: the rest is kept aside and klog-dump --salvage returns it" {
	start_broker
	seq -f '%05g' 1 16000 | klog-produce -t s -a all
	kill -KILL "$BROKER_PID"
	wait "$BROKER_PID" || true
	f="$BROKER_DATA/s-0/00000000000000000000.klog"
	[ "$(stat -c %s "$f")" -eq 224000 ]   # 16,000 entries of 14 bytes
	flip "$f" 112013                        # inside record 8001
	start_broker
	side="$BROKER_DATA/s-0/00000000000000112000.salvage"
	grep -qF "recovery truncated 112000 bytes at offset 112000, kept in $side (klog-dump --salvage)" "$TMP/broker.log"
	[ "$(stat -c %s "$side")" -eq 112000 ]
	run -0 klog-consume -t s -o beginning -e
	[ "${#lines[@]}" -eq 8000 ]
	# The salvage: records 8002..16000, with their old offsets.
	run -0 --separate-stderr klog-dump --salvage -v "$BROKER_DATA/s-0"
	[ "${#lines[@]}" -eq 7999 ]
	echo "${lines[0]}" | jq -e '.topic == "s" and .partition == 0 and
		.offset == 112014 and .payload == "08002"'
	[[ $stderr == *"7999 messages from 1 salvage file, 14 bytes in no valid message"* ]]
	# Sent back, the partition holds every record but the damaged one.
	klog-dump --salvage "$BROKER_DATA/s-0" | klog-produce -J -t s -a all
	run -0 klog-consume -t s -o beginning -e
	[ "$output" = "$(seq -f '%05g' 1 16000 | grep -vx 08001)" ]
	# The side file is not a segment: dump and retention leave it alone.
	run -0 klog-dump --verify "$BROKER_DATA/s-0"
	# A directory with none says so.
	run -0 --separate-stderr klog-dump --salvage "$BROKER_DATA"
	[[ $stderr == *"0 messages from 0 salvage files"* ]]
}
