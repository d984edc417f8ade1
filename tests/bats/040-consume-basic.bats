#!/usr/bin/env bats
# klog-consume against a real klog-serve: formats, -J, offsets and
# rewinding, counts, listing, usage errors and exit codes.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	common_setup
}

teardown() {
	common_teardown
}

@test "consume: -h prints usage on stdout, --version the version" {
	run -0 --separate-stderr klog-consume -h
	[[ "${lines[0]}" == "usage: klog-consume "* ]]
	[ -z "$stderr" ]
	run -0 klog-consume --version
	[ "$output" = "klog-consume 0.1.0" ]
}

@test "consume: usage errors exit 64 with one line and a hint" {
	run -64 --separate-stderr klog-consume
	[ "$stderr" = "klog-consume: no topic given (-t)
Try 'klog-consume -h'" ]
	run -64 --separate-stderr klog-consume -t x --nope
	[ "${stderr_lines[0]}" = "klog-consume: --nope: unknown option" ]
	run -64 --separate-stderr klog-consume -t x -f '%z'
	[ "${stderr_lines[0]}" = "klog-consume: -f %z: %z: unknown format token" ]
	run -64 --separate-stderr klog-consume -t x -f '\x4'
	[[ "${stderr_lines[0]}" == *"\\x: needs two hex digits" ]]
	run -64 --separate-stderr klog-consume -t x -J -f '%s'
	[ "${stderr_lines[0]}" = "klog-consume: -f, -J and -D cannot be used together" ]
	run -64 --separate-stderr klog-consume -t x -o yesterday
	[ "${stderr_lines[0]}" = "klog-consume: -o yesterday: invalid" ]
	run -64 --separate-stderr klog-consume -t x -c 0
	[ "${stderr_lines[0]}" = "klog-consume: -c 0: too small" ]
	run -64 --separate-stderr klog-consume -t x --reset never
	[[ "${stderr_lines[0]}" == "klog-consume: --reset never: "* ]]
	run -64 --separate-stderr klog-consume -t 'no/slash'
	[[ "${stderr_lines[0]}" == 'klog-consume: topic "no/slash": '* ]]
	[ "${stderr_lines[1]}" = "Try 'klog-consume -h'" ]
}

@test "consume: no broker listening: exit 69 with one line" {
	local port
	port=$(free_port)
	run -69 --separate-stderr klog-consume -b "127.0.0.1:$port" -t t -e
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == *"127.0.0.1:$port: Connection refused" ]]
	run -69 --separate-stderr klog-consume -b "127.0.0.1:$port" -L
}

@test "consume: an unknown topic or partition: exit 1" {
	start_broker
	run -1 --separate-stderr klog-consume -t nothing -e
	[ "$stderr" = 'klog-consume: topic "nothing" does not exist' ]
	echo x | klog-produce -t t -a all
	run -1 --separate-stderr klog-consume -t t -p 7 -e
	[[ "$stderr" == 'klog-consume: topic "t" has '*', no partition 7' ]]
}

@test "consume: every -f token and escape" {
	start_broker
	printf 'hello\nworld\n' | klog-produce -t fmt -a all
	run -0 klog-consume -t fmt -o beginning -e \
		-f '%t|%p|%o|%O|%S|%s|%%|\t|\x41\n'
	[ "${lines[0]}" = "fmt|0|0|14|5|hello|%|	|A" ]
	[ "${lines[1]}" = "fmt|0|14|28|5|world|%|	|A" ]
	klog-consume -t fmt -o beginning -e -f '%R%s' | od -An -tx1 |
		tr -d ' \n' >"$TMP/bin"
	[ "$(cat "$TMP/bin")" = "0000000568656c6c6f00000005776f726c64" ]
	[ "$(klog-consume -t fmt -o beginning -e -D '%\0' | od -An -c |
		tr -s ' ' | tr -d '\n')" = " h e l l o % \0 w o r l d % \0" ]
}

@test "consume: -J is valid JSON, with payload_base64 for binary" {
	start_broker
	printf 'text "quoted"\n' | klog-produce -t j -a all
	printf '\xff\x00\x01\n' | klog-produce -t j -a all
	run -0 klog-consume -t j -o beginning -e -J
	[ "${lines[0]}" = '{"topic":"j","partition":0,"offset":0,"next_offset":22,"size":13,"payload":"text \"quoted\""}' ]
	[ "${lines[1]}" = '{"topic":"j","partition":0,"offset":22,"next_offset":34,"size":3,"payload_base64":"/wAB"}' ]
	klog-consume -t j -o beginning -e -J | jq -e . >/dev/null
}

@test "consume: rewind to a printed offset and replay -c messages" {
	start_broker
	seq 1 100 | klog-produce -t r -a all
	off=$(klog-consume -t r -o beginning -e -f '%o %s\n' | awk '$2 == 42 {print $1}')
	[ -n "$off" ]
	run -0 klog-consume -t r -o "$off" -c 3
	[ "$output" = "42
43
44" ]
	# -o end -e: nothing; s@0 starts at the beginning.
	run -0 klog-consume -t r -o end -e
	[ -z "$output" ]
	run -0 klog-consume -t r -o s@0 -c 1
	[ "$output" = "1" ]
}

@test "consume: an offset inside a message: exit 1 with the message" {
	start_broker
	seq 1 10 | klog-produce -t b -a all
	run -1 --separate-stderr klog-consume -t b -o 3 -e
	[ "$stderr" = 'klog-consume: topic "b" partition 0: offset 3 is not a message boundary' ]
	[ -z "$output" ]
}

@test "consume: an offset past the end: reset earliest by default, or fail" {
	start_broker
	seq 1 3 | klog-produce -t o -a all
	run -1 --separate-stderr klog-consume -t o -o 100000 --reset fail -c 1
	[ "$stderr" = 'klog-consume: offset 100000 is past the end (30) of o/0' ]
	run -0 --separate-stderr klog-consume -t o -o 100000 -c 3
	[ "$output" = "1
2
3" ]
	[[ "$stderr" == *"going on from 0"* ]]
	run -0 --separate-stderr klog-consume -t o -o 100000 -c 3 -q
	[ -z "$stderr" ]
}

@test "consume: -L lists topics, partitions and their offsets" {
	start_broker
	seq 1 10 | klog-produce -t alpha -a all
	echo x | klog-produce -t beta -a all
	run -0 klog-consume -L
	[[ "$output" == *"alpha	0	0	101"* ]]
	[[ "$output" == *"beta	0	0	10"* ]]
	run -0 klog-consume -L -t beta
	[ "$output" = "beta	0	0	10" ]
	run -1 klog-consume -L -t gamma
}

@test "consume: -L -J writes one JSON object per partition, not the TSV" {
	start_broker
	seq 1 10 | klog-produce -t alpha -a all
	echo x | klog-produce -t beta -a all
	run -0 klog-consume -L -J -t beta
	[ "$output" = '{"topic":"beta","partition":0,"earliest":0,"latest":10}' ]
	run -0 klog-consume -L -J
	[ "${#lines[@]}" -eq 2 ]
	printf '%s\n' "$output" | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
assert {r["topic"] for r in rows} == {"alpha", "beta"}, rows
assert all(set(r) == {"topic", "partition", "earliest", "latest"} for r in rows)'
}

@test "consume: | head -1 ends quietly" {
	start_broker
	seq 1 200000 | klog-produce -t h -a all
	run -0 --separate-stderr bash -c 'klog-consume -t h -o beginning | head -n 1'
	[ "$output" = "1" ]
	[ -z "$stderr" ]
}

@test "consume: a full stdout exits 74" {
	[ -w /dev/full ] || skip "no /dev/full"
	start_broker
	seq 1 1000 | klog-produce -t f -a all
	run -74 --separate-stderr bash -c \
		'klog-consume -t f -o beginning -e >/dev/full'
	[[ "$stderr" == "klog-consume: stdout: No space left on device" ]]
}

@test "consume: -v counts messages" {
	start_broker
	seq 1 1000 | klog-produce -t v -a all
	run -0 --separate-stderr klog-consume -t v -o beginning -e -v
	[ "${#lines[@]}" -eq 1000 ]
	[ "$stderr" = "klog-consume: 1000 messages, 2893 payload bytes" ]
}
