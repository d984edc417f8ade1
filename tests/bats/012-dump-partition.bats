#!/usr/bin/env bats
# klog-dump on partition directories: segment order, contiguity, partial
# tails in the last segment or elsewhere, -o across segments.

bats_require_minimum_version 1.5.0
load helpers

# events-0: three contiguous segments, offsets 0-169, 169-197, 197-366.
setup() {
	common_setup
	P="$TMP/events-0"
	mkdir "$P"
	cp "$DATA/dump-valid.bin" "$P/00000000000000000000.klog"
	head -c 28 "$DATA/dump-truncated.bin" >"$P/00000000000000000169.klog"
	cp "$DATA/dump-valid.bin" "$P/00000000000000000197.kafka"
	echo "not a segment" >"$P/README"
}

teardown() {
	common_teardown
}

@test "partition: segments in base-offset order, partition offsets" {
	run -0 --separate-stderr klog-dump "$P"
	[ "${#lines[@]}" -eq 16 ]
	[[ "${lines[7]}" == 'offset=169 pos=0 size=5 '*'payload="alpha"' ]]
	[[ "${lines[8]}" == 'offset=183 pos=14 size=5 '*'payload="bravo"' ]]
	[[ "${lines[9]}" == 'offset=197 pos=0 size=5 '*'payload="hello"' ]]
	[[ "${lines[15]}" == 'offset=345 pos=148 '* ]]
	[ -z "$stderr" ]
	run -0 klog-dump --verify --deep "$P/"
}

@test "partition: -s gives one summary per segment" {
	run -0 klog-dump -s "$P"
	[ "${#lines[@]}" -eq 3 ]
	[[ "${lines[0]}" == "$P/00000000000000000000.klog: base=0 first=0 next=169 entries=7 "* ]]
	[[ "${lines[1]}" == "$P/00000000000000000169.klog: base=169 first=169 next=197 entries=2 messages=2 batches=0 records=0 payload_bytes=10 overhead_bytes=18 "* ]]
	[[ "${lines[2]}" == "$P/00000000000000000197.kafka: base=197 first=197 next=366 "*' status=ok' ]]
	run -0 bash -c 'klog-dump -s -J --deep "$1" | jq -s "map(.messages) | add"' _ "$P"
	[ "$output" = 20 ]
}

@test "partition: a missing segment is a gap, reported like corruption" {
	rm "$P/00000000000000000169.klog"
	run -65 --separate-stderr klog-dump "$P"
	[ "${#lines[@]}" -eq 14 ]
	[ "$stderr" = "klog-dump: $P/00000000000000000197.kafka: offset 197: gap of 28 bytes after the previous segment, which ends at 169" ]
	run -1 klog-dump --verify "$P"
	run -1 klog-dump --verify --allow-partial "$P"
}

@test "partition: overlapping segments are reported" {
	head -c 14 "$DATA/dump-crc.bin" >"$P/00000000000000000190.klog"
	run -65 --separate-stderr klog-dump -s "$P"
	[[ "$stderr" == *"00000000000000000190.klog: offset 190: overlaps the previous segment, which ends at 197"* ]]
	[[ "$stderr" == *"00000000000000000197.kafka: offset 197: overlaps the previous segment, which ends at 204"* ]]
}

@test "partition: a stray empty segment sharing a base is no gap" {
	: >"$P/00000000000000000169.kafka"
	run -0 --separate-stderr klog-dump --verify "$P"
	[ -z "$stderr" ]
}

@test "partition: a partial tail in the last segment, after a crash" {
	printf '\000\000\000\040\000abc' >>"$P/00000000000000000197.kafka"
	run -65 --separate-stderr klog-dump "$P"
	[ "${#lines[@]}" -eq 16 ]
	[ "$stderr" = "klog-dump: $P/00000000000000000197.kafka: offset 366 (byte 0xa9): partial entry at the end of the file (8 of 36 bytes)" ]
	run -1 klog-dump --verify "$P"
	run -0 --separate-stderr klog-dump --verify --allow-partial "$P"
	[[ "$stderr" == *'partial entry at the end of the file (8 of 36 bytes)' ]]
}

@test "partition: a partial tail in an older segment is always a problem" {
	cp "$DATA/dump-truncated.bin" "$P/00000000000000000169.klog"
	mv "$P/00000000000000000197.kafka" "$P/00000000000000000207.kafka"
	run -1 --separate-stderr klog-dump --verify --allow-partial "$P"
	[ "$stderr" = "klog-dump: $P/00000000000000000169.klog: offset 197 (byte 0x1c): partial entry at the end of the file (10 of 16 bytes)" ]
}

@test "partition: -o starts in the right segment, at a boundary only" {
	run -0 klog-dump -o 183 -P 0 "$P"
	[ "${#lines[@]}" -eq 8 ]
	[ "${lines[0]}" = 'offset=183 pos=14 size=5 magic=0 codec=none crc=0x099bb889 computed=0x099bb889 status=ok' ]
	[[ "${lines[1]}" == 'offset=197 pos=0 '* ]]
	run -0 klog-dump -o 197 -n 1 "$P"
	[[ "$output" == 'offset=197 pos=0 '*'payload="hello"' ]]
	run -0 klog-dump -o 366 "$P"
	[ -z "$output" ]
	run -1 --separate-stderr klog-dump -o 184 "$P"
	[ "$stderr" = "klog-dump: $P/00000000000000000169.klog: offset 184 is not a message boundary" ]
	run -1 --separate-stderr klog-dump -o 367 "$P"
	[ "$stderr" = "klog-dump: $P: offset 367 is outside the partition (offsets 0 to 366)" ]
}

@test "partition: -n counts per segment" {
	run -0 klog-dump -n 1 -P 0 "$P"
	[ "${#lines[@]}" -eq 3 ]
	[[ "${lines[1]}" == 'offset=169 '* ]]
}

@test "partition: a directory without segments fails: 1" {
	mkdir "$TMP/empty-0"
	run -1 --separate-stderr klog-dump "$TMP/empty-0"
	[ "$stderr" = "klog-dump: $TMP/empty-0: no segment files" ]
	# ...and does not stop the next argument.
	run -1 --separate-stderr klog-dump "$TMP/empty-0" "$P"
	[ "${#lines[@]}" -eq 16 ]
}

@test "partition: directories and their segments are never modified" {
	printf '\000\000' >>"$P/00000000000000000197.kafka"
	touch -d '2001-01-01 00:00:00' "$P" "$P"/*
	(cd "$P" && stat -c '%n %s %Y' . * && sha256sum -- *) >"$TMP/before"
	for opt in "" -J -s --verify "--verify --deep --allow-partial" "-o 183"; do
		# shellcheck disable=SC2086
		klog-dump $opt "$P" >/dev/null 2>&1 || true
	done
	(cd "$P" && stat -c '%n %s %Y' . * && sha256sum -- *) >"$TMP/after"
	diff "$TMP/before" "$TMP/after"
}

@test "partition: a replica's leader epochs come first, and each must start an entry" {
	printf 'klog-epochs 1\n1 0\n3 183\n4 366\n' >"$P/leader-epochs"
	run -0 --separate-stderr klog-dump -n 1 "$P"
	[ "${lines[0]}" = "epoch=1 start=0" ]
	[ "${lines[1]}" = "epoch=3 start=183" ]
	[ "${lines[2]}" = "epoch=4 start=366" ]
	[[ "${lines[3]}" == 'offset=0 pos=0 '* ]]
	run -0 klog-dump -s -J "$P"
	[ "${lines[0]}" = '{"epoch":1,"start":0}' ]
	[ "${#lines[@]}" -eq 6 ]
	# An epoch at the end, which has written nothing yet, is no problem.
	run -0 klog-dump --verify "$P"
	printf 'klog-epochs 1\n1 0\n3 184\n' >"$P/leader-epochs"
	run -1 --separate-stderr klog-dump --verify "$P"
	[[ "$stderr" == *"offset 184 "*"a leader epoch starts inside an entry"* ]]
	printf 'klog-epochs 1\n1 0\n3 400\n' >"$P/leader-epochs"
	run -1 klog-dump --verify "$P"
	printf 'not an epoch file\n' >"$P/leader-epochs"
	run -1 --separate-stderr klog-dump --verify "$P"
	[[ "$stderr" == *"leader-epochs file does not parse"* ]]
	run -65 klog-dump -s "$P"
}
