#!/usr/bin/env bats
# klog-dump on single files: the tests/data/dump-*.bin fixtures (see
# tests/data/dump-gen.py for their layout), exit codes, options, read-only.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	common_setup
}

teardown() {
	common_teardown
}

@test "dump: a valid file, one line per message, exit 0" {
	run -0 --separate-stderr klog-dump "$DATA/dump-valid.bin"
	[ "${#lines[@]}" -eq 7 ]
	[ "${lines[0]}" = 'offset=0 pos=0 size=5 magic=0 codec=none crc=0x3610a686 computed=0x3610a686 status=ok payload="hello"' ]
	[ "${lines[1]}" = 'offset=14 pos=14 size=0 magic=0 codec=none crc=0x00000000 computed=0x00000000 status=ok payload=""' ]
	[ "${lines[2]}" = 'offset=23 pos=23 size=11 magic=0 codec=none crc=0x44a5b506 computed=0x44a5b506 status=ok payload="\x00\x01\xfe\xff binary"' ]
	[ "${lines[4]}" = 'offset=62 pos=62 size=9 magic=1 codec=none crc=0xcd0303c1 computed=0xcd0303c1 status=ok payload="magic one"' ]
	[[ "${lines[5]}" == 'offset=81 pos=81 size=57 magic=1 codec=gzip '*'status=ok payload="\x1f\x8b'*'"...' ]]
	[ "${lines[6]}" = 'offset=148 pos=148 size=12 magic=0 codec=none crc=0xf883de31 computed=0xf883de31 status=ok payload="q\"b\\n\nt\t end"' ]
	[ -z "$stderr" ]
}

@test "dump: --deep shows the messages inside a gzip wrapper, indented" {
	run -0 klog-dump --deep "$DATA/dump-valid.bin"
	[ "${#lines[@]}" -eq 10 ]
	[ "${lines[6]}" = '  offset=81 pos=81 size=3 magic=1 codec=none crc=0x7a6c86f1 computed=0x7a6c86f1 status=ok payload="one"' ]
	[[ "${lines[8]}" == '  offset=81 pos=81 size=5 '*'payload="three"' ]]
	[[ "${lines[9]}" == 'offset=148 '* ]]
}

@test "dump: a CRC mismatch is shown, reported, and the dump goes on: 65" {
	run -65 --separate-stderr klog-dump "$DATA/dump-crc.bin"
	[ "${#lines[@]}" -eq 3 ]
	[ "${lines[1]}" = 'offset=14 pos=14 size=5 magic=0 codec=none crc=0x099bb889 computed=0x34fb9139 status=crc-mismatch payload="cravo"' ]
	[[ "${lines[2]}" == *'payload="charlie"' ]]
	[ "$stderr" = "klog-dump: $DATA/dump-crc.bin: offset 14 (byte 0xe): crc mismatch (stored 0x099bb889, computed 0x34fb9139)" ]
}

@test "dump: --verify prints nothing on stdout and exits 1 at corruption" {
	run -1 --separate-stderr klog-dump --verify "$DATA/dump-crc.bin"
	[ -z "$output" ]
	[[ "$stderr" == *'dump-crc.bin: offset 14 (byte 0xe): crc mismatch'* ]]
	run -0 --separate-stderr klog-dump --verify "$DATA/dump-valid.bin"
	[ -z "$output" ]
	[ -z "$stderr" ]
}

@test "dump: a truncated file reports its partial tail: 65, --verify 1" {
	run -65 --separate-stderr klog-dump "$DATA/dump-truncated.bin"
	[ "${#lines[@]}" -eq 2 ]
	[ "$stderr" = "klog-dump: $DATA/dump-truncated.bin: offset 28 (byte 0x1c): partial entry at the end of the file (10 of 16 bytes)" ]
	run -1 klog-dump --verify "$DATA/dump-truncated.bin"
	# A lone file is the last segment: --allow-partial accepts the tail
	# but still reports it.
	run -0 --separate-stderr klog-dump --verify --allow-partial "$DATA/dump-truncated.bin"
	[[ "$stderr" == *'partial entry at the end of the file (10 of 16 bytes)' ]]
}

@test "dump: an impossible length stops the file: 65" {
	run -65 --separate-stderr klog-dump "$DATA/dump-badlen.bin"
	[ "${#lines[@]}" -eq 1 ]
	[[ "${lines[0]}" == *'payload="alpha"' ]]
	[ "$stderr" = "klog-dump: $DATA/dump-badlen.bin: offset 14 (byte 0xe): entry length too large (length field 0xffffffff)" ]
	run -1 klog-dump --verify "$DATA/dump-badlen.bin"
}

@test "dump: a file that is not a segment at all: 65, --verify 1" {
	run -65 --separate-stderr klog-dump "$DATA/dump-notseg.bin"
	[ -z "$output" ]
	# "This" read as a length field.
	[ "$stderr" = "klog-dump: $DATA/dump-notseg.bin: offset 0 (byte 0x0): entry length too large (length field 0x54686973)" ]
	run -1 klog-dump --verify "$DATA/dump-notseg.bin"
}

@test "dump: an empty file is a valid, empty segment" {
	run -0 --separate-stderr klog-dump "$DATA/dump-empty.bin"
	[ -z "$output" ]
	[ -z "$stderr" ]
	run -0 klog-dump --verify "$DATA/dump-empty.bin"
	run -0 klog-dump -s "$DATA/dump-empty.bin"
	[[ "$output" == *' first=0 next=0 entries=0 messages=0 batches=0 records=0 payload_bytes=0 '*' status=ok' ]]
}

@test "dump: a missing file is an I/O error: 74" {
	run -74 --separate-stderr klog-dump "$TMP/nope.klog"
	[ -z "$output" ]
	[ "$stderr" = "klog-dump: $TMP/nope.klog: No such file or directory" ]
	run -74 klog-dump --verify "$TMP/nope.klog"
}

@test "dump: many inputs: warn, go on, exit non-zero at the end" {
	run -65 --separate-stderr klog-dump "$DATA/dump-valid.bin" \
	    "$DATA/dump-notseg.bin" "$DATA/dump-crc.bin" "$DATA/dump-valid.bin"
	[ "${#lines[@]}" -eq 17 ]
	[[ "${lines[16]}" == 'offset=148 '* ]]
	[ "$(grep -c '^klog-dump: ' <<<"$stderr")" -eq 2 ]
	# An unreadable input wins over corrupt data.
	run -74 --separate-stderr klog-dump "$DATA/dump-crc.bin" "$TMP/nope" \
	    "$DATA/dump-valid.bin"
	[ "${#lines[@]}" -eq 10 ]
	[[ "$stderr" == *"$TMP/nope: No such file or directory"* ]]
	run -1 klog-dump --verify "$DATA/dump-valid.bin" "$DATA/dump-crc.bin" \
	    "$DATA/dump-valid.bin"
}

@test "dump: --deep checks inside wrappers; shallow does not" {
	run -0 klog-dump --verify "$DATA/dump-deepbad.bin"
	run -1 --separate-stderr klog-dump --verify --deep "$DATA/dump-deepbad.bin"
	[ "$stderr" = "klog-dump: $DATA/dump-deepbad.bin: offset 15 (byte 0xf): crc mismatch in a message inside the wrapper (stored 0x822b39fb, computed 0x83e953cc)" ]
	run -65 --separate-stderr klog-dump --deep "$DATA/dump-badgzip.bin"
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[1]}" == *'payload="after"' ]]
	[ "$stderr" = "klog-dump: $DATA/dump-badgzip.bin: offset 0 (byte 0x0): gzip wrapper: wrapper does not inflate" ]
}

@test "dump: a snappy wrapper under --deep is noted, not a problem" {
	run -0 --separate-stderr klog-dump --deep "$DATA/dump-snappy.bin"
	[ "${#lines[@]}" -eq 2 ]
	[ "$stderr" = "klog-dump: $DATA/dump-snappy.bin: offset 0 (byte 0x0): snappy wrapper not supported; its messages are not checked" ]
	run -0 --separate-stderr klog-dump -q --deep "$DATA/dump-snappy.bin"
	[ -z "$stderr" ]
}

@test "dump: -q keeps problems off stderr, not out of the exit status" {
	run -65 --separate-stderr klog-dump -q "$DATA/dump-crc.bin"
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 3 ]
	run -1 --separate-stderr klog-dump -q --verify "$DATA/dump-notseg.bin"
	[ -z "$stderr" ]
	[ -z "$output" ]
}

@test "dump: -P sets the preview, -n the count, -b the base" {
	run -0 klog-dump -P 3 -n 2 "$DATA/dump-valid.bin"
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[0]}" == *' status=ok payload="hel"...' ]]
	[[ "${lines[1]}" == *' status=ok payload=""' ]]
	run -0 klog-dump -P 0 -n 1 -b 1000 "$DATA/dump-valid.bin"
	[ "$output" = 'offset=1000 pos=0 size=5 magic=0 codec=none crc=0x3610a686 computed=0x3610a686 status=ok' ]
}

@test "dump: a segment's name gives its base offset" {
	cp "$DATA/dump-valid.bin" "$TMP/00000000000000001000.kafka"
	run -0 --separate-stderr klog-dump -v -n 2 "$TMP/00000000000000001000.kafka"
	[[ "${lines[1]}" == 'offset=1014 pos=14 '* ]]
	[ "$stderr" = "klog-dump: $TMP/00000000000000001000.kafka: 2 messages in 2 entries, offsets 1000 to 1023" ]
	run -0 --separate-stderr klog-dump -v -n 1 "$DATA/dump-valid.bin"
	[[ "$stderr" == *"dump-valid.bin: not named like a segment; base offset 0"* ]]
}

@test "dump: -o starts at a message boundary, and only there" {
	run -0 klog-dump -o 23 "$DATA/dump-valid.bin"
	[ "${#lines[@]}" -eq 5 ]
	[[ "${lines[0]}" == 'offset=23 pos=23 '* ]]
	run -1 --separate-stderr klog-dump -o 24 "$DATA/dump-valid.bin"
	[ "$stderr" = "klog-dump: $DATA/dump-valid.bin: offset 24 is not a message boundary" ]
	run -1 --separate-stderr klog-dump -o 170 "$DATA/dump-valid.bin"
	[ "$stderr" = "klog-dump: $DATA/dump-valid.bin: offset 170 is outside the file (offsets 0 to 169)" ]
	run -0 klog-dump -o 169 "$DATA/dump-valid.bin"
	[ -z "$output" ]
}

@test "dump: the files are never modified" {
	cp "$DATA"/dump-*.bin "$TMP/"
	touch -d '2001-01-01 00:00:00' "$TMP"/*.bin
	(cd "$TMP" && sha256sum -- *.bin && stat -c '%n %s %Y' -- *.bin) >"$TMP/before"
	for opt in "" -J -s --verify "--verify --deep" "-J --deep" "-o 14 -n 1"; do
		# shellcheck disable=SC2086
		klog-dump $opt "$TMP"/*.bin >/dev/null 2>&1 || true
	done
	(cd "$TMP" && sha256sum -- *.bin && stat -c '%n %s %Y' -- *.bin) >"$TMP/after"
	diff "$TMP/before" "$TMP/after"
}

@test "dump: -h prints usage on stdout, exit 0; --version" {
	run -0 --separate-stderr klog-dump -h
	[[ "${lines[0]}" == 'usage: klog-dump '* ]]
	[[ "$output" == *'--verify'* ]]
	[ -z "$stderr" ]
	run -0 klog-dump --help
	run -0 klog-dump --version
	[ "$output" = "klog-dump 0.1.0" ]
}

@test "dump: misuse exits 64 with one line and a hint" {
	run -64 --separate-stderr klog-dump -x "$DATA/dump-valid.bin"
	[ -z "$output" ]
	[ "$stderr" = "klog-dump: -x: unknown option
Try 'klog-dump -h'" ]
	run -64 --separate-stderr klog-dump --bogus "$DATA/dump-valid.bin"
	[[ "$stderr" == 'klog-dump: --bogus: unknown option'* ]]
	run -64 klog-dump
	run -64 --separate-stderr klog-dump -n 0 "$DATA/dump-valid.bin"
	[[ "$stderr" == 'klog-dump: -n 0: too small'* ]]
	run -64 --separate-stderr klog-dump -o 12x "$DATA/dump-valid.bin"
	[[ "$stderr" == 'klog-dump: -o 12x: invalid'* ]]
	run -64 klog-dump -P -1 "$DATA/dump-valid.bin"
	run -64 klog-dump -b "" "$DATA/dump-valid.bin"
	run -64 klog-dump -q -v "$DATA/dump-valid.bin"
	run -64 --separate-stderr klog-dump "$DATA/dump-valid.bin" -n
	[[ "$stderr" == 'klog-dump: -n: option needs an argument'* ]]
}

@test "dump: a full stdout is an I/O error: 74" {
	[ -w /dev/full ] || skip "no /dev/full"
	run -74 --separate-stderr bash -c 'klog-dump "$1" >/dev/full' _ "$DATA/dump-valid.bin"
	[ "$stderr" = "klog-dump: stdout: No space left on device" ]
}

@test "dump: | head ends quietly" {
	python3 - "$TMP/big.klog" <<'PY'
import struct, sys, zlib
p = b"x" * 100
e = struct.pack(">IBI", 5 + len(p), 0, zlib.crc32(p)) + p
open(sys.argv[1], "wb").write(e * 20000)
PY
	run -0 bash -c 'klog-dump "$1" 2>"$2" | head -n 1' _ "$TMP/big.klog" "$TMP/err"
	[[ "$output" == 'offset=0 pos=0 size=100 '* ]]
	[ ! -s "$TMP/err" ]
}

# Issue 16: progress on long work, on stderr, only for a terminal or with
# --progress; quiet in pipes and under -q.
@test "dump: --verify shows progress on a terminal or with --progress, never in a pipe" {
	mkdir -p "$TMP/p-0"
	cp "$DATA/dump-valid.bin" "$TMP/p-0/00000000000000000000.klog"
	run -0 --separate-stderr klog-dump --verify "$TMP/p-0"
	[ -z "$stderr" ]
	run -0 --separate-stderr klog-dump --verify --progress "$TMP/p-0"
	[[ $stderr == "klog-dump: $TMP/p-0: "*" of 169 B ("*"%), 1 messages"* ]]
	run -0 --separate-stderr klog-dump --verify --progress -q "$TMP/p-0"
	[ -z "$stderr" ]
	# On a terminal: the line is drawn in place and cleared at the end.
	run -0 script -qec "klog-dump --verify $TMP/p-0" /dev/null
	[[ $output == *$'\r'"klog-dump: $TMP/p-0: "* ]]
	[[ $output == *$'\r\033[K'* ]]
}
