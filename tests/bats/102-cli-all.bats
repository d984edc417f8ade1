#!/usr/bin/env bats
# The command-line conventions every tool shares (cmd/cli): -h and --help
# on stdout with exit 0, --version, usage errors in one shape with exit 64,
# and a stdout that cannot be written is exit 74.

bats_require_minimum_version 1.5.0
load helpers

TOOLS="klog-serve klog-produce klog-consume klog-dump klog-retain klog-group"

setup() {
	common_setup
}

teardown() {
	common_teardown
}

@test "cli: -h and --help print the usage on stdout, nothing on stderr, 0" {
	local t
	for t in $TOOLS; do
		run -0 --separate-stderr "$t" -h
		[ -z "$stderr" ] || { echo "$t: $stderr"; false; }
		[[ "${lines[0]}" == "usage: $t "* ]] || { echo "$t: ${lines[0]}"; false; }
		[[ "$output" == *"Exit status: 0 "* ]]
		[ "$(printf '%s\n' "$output" | grep -c -- '--version')" -ge 1 ]
		local short=$output
		run -0 --separate-stderr "$t" --help
		[ "$output" = "$short" ]
	done
}

@test "cli: --version prints the name and 0.1.0, 0" {
	local t
	for t in $TOOLS; do
		run -0 --separate-stderr "$t" --version
		[ "$output" = "$t 0.1.0" ]
		[ -z "$stderr" ]
	done
}

@test "cli: -h and --version into a full stdout exit 74" {
	local t
	[ -w /dev/full ] || skip "no /dev/full"
	for t in $TOOLS; do
		run -74 bash -c '"$1" -h >/dev/full' _ "$t"
		run -74 bash -c '"$1" --version >/dev/full' _ "$t"
	done
}

# expect_misuse LINE CMD...: exit 64, LINE then the hint on stderr, no stdout.
expect_misuse() {
	local want=$1
	shift
	run -64 --separate-stderr "$@"
	[ -z "$output" ]
	[ "${#stderr_lines[@]}" -eq 2 ] || { echo "$*: $stderr"; false; }
	[ "${stderr_lines[0]}" = "$want" ] || { echo "$*: ${stderr_lines[0]}"; false; }
	[ "${stderr_lines[1]}" = "Try '$1 -h'" ]
}

@test "cli: unknown options are one line and a hint, 64, in every tool" {
	local t
	for t in $TOOLS; do
		expect_misuse "$t: -Y: unknown option" "$t" -Y
		expect_misuse "$t: --bogus: unknown option" "$t" --bogus
	done
}

@test "cli: a missing option argument says which option, 64" {
	expect_misuse "klog-serve: -d: option needs an argument" klog-serve -d
	expect_misuse "klog-produce: -t: option needs an argument" klog-produce -t
	expect_misuse "klog-consume: -t: option needs an argument" klog-consume -t
	expect_misuse "klog-dump: -n: option needs an argument" klog-dump -n
	expect_misuse "klog-retain: -d: option needs an argument" klog-retain -d
	expect_misuse "klog-group: -g: option needs an argument" klog-group -g
	expect_misuse "klog-group: --to-offset: option needs an argument" \
		klog-group --to-offset
}

@test "cli: a bad number names the option, the value and the reason, 64" {
	expect_misuse "klog-serve: --partitions x: invalid" klog-serve --partitions x
	expect_misuse "klog-serve: --segment-bytes 1Q: invalid" klog-serve --segment-bytes 1Q
	expect_misuse "klog-produce: -p 2147483648: too large" klog-produce -p 2147483648 -t a
	expect_misuse "klog-consume: -c 0: too small" klog-consume -c 0 -t a
	expect_misuse "klog-dump: -n x: invalid" klog-dump -n x f
	expect_misuse "klog-retain: -w 1y: invalid" klog-retain -w 1y --max-age 1d
	expect_misuse "klog-group: -T 0: too small" klog-group -T 0 list
	expect_misuse "klog-group: --to-offset -1: too small" \
		klog-group reset -g g -t t --to-offset -1 -n
}

@test "cli: a stray argument is a usage error where none is taken" {
	expect_misuse "klog-serve: extra: unexpected argument" klog-serve extra
	expect_misuse "klog-produce: extra: unexpected argument" klog-produce -t a extra
	expect_misuse "klog-consume: extra: unexpected argument" klog-consume -t a extra
	expect_misuse "klog-retain: extra: unexpected argument" klog-retain --max-age 1d extra
	expect_misuse "klog-group: extra: unexpected argument" klog-group list extra
	expect_misuse "klog-group: frob: unknown command" klog-group frob
}

@test "cli: a closed stdin or stdout is never a socket: the tool fails with 74" {
	start_broker
	seq 1 3 | klog-produce -t fds
	# Before, the consumer's socket took fd 1 and the records went to
	# the broker, exit 0; the producer read its own socket and hung.
	run -74 --separate-stderr bash -c 'klog-consume -t fds -o beginning -e >&-'
	[ "$stderr" = "klog-consume: stdout: Bad file descriptor" ]
	run -74 --separate-stderr timeout 10 bash -c 'klog-produce -t fds <&-'
	[ "$stderr" = "klog-produce: stdin: read: Bad file descriptor" ]
	# A closed stderr: the data still flows, nothing is lost on stdout.
	run -0 --separate-stderr bash -c 'klog-consume -t fds -o beginning -e 2>&-'
	[ "$output" = "$(seq 1 3)" ]
	! grep -q 'over the limit' "$TMP/broker.log"
	run -0 klog-consume -t fds -o beginning -e
	[ "$output" = "$(seq 1 3)" ]
}

@test "cli: a single-valued option given twice is an error naming it; lists may repeat" {
	# Before, the last one won silently: -t a -t b published to b.
	expect_misuse "klog-produce: -t given twice" klog-produce -t a -t b
	expect_misuse "klog-produce: -t given twice" klog-produce -t a --topic b
	expect_misuse "klog-produce: --batch given twice" \
		klog-produce -t a --batch 1 --batch=2
	expect_misuse "klog-produce: -b given twice" klog-produce -t a -b h:1 -b h:2
	expect_misuse "klog-produce: --zk-session-timeout given twice" \
		klog-produce -t a --zk-session-timeout 1s --zk-session-timeout 2s
	expect_misuse "klog-consume: -o given twice" klog-consume -t a -o 0 -o 5
	expect_misuse "klog-serve: -d given twice" klog-serve -d "$TMP/a" -d "$TMP/b"
	expect_misuse "klog-serve: --segment-bytes given twice" \
		klog-serve --segment-bytes 1M --segment-bytes 2M
	expect_misuse "klog-dump: -n given twice" klog-dump -n 1 -n 2 f
	expect_misuse "klog-retain: --max-age given twice" \
		klog-retain --max-age 1d --max-age 2d
	expect_misuse "klog-group: -g given twice" klog-group -g a -g b list
	[ ! -e "$TMP/a" ] && [ ! -e "$TMP/b" ]
	# Flags without a value may repeat; lists are lists.
	start_broker
	seq 1 3 | klog-produce -t rep -a all -q -q
	run -0 klog-consume -t rep -p 0 -o beginning -e
	[ "$output" = "$(seq 1 3)" ]
	# A partition listed twice was read twice at once and never ended.
	run -64 --separate-stderr timeout 10 \
		klog-consume -t rep -p 0 -p 0 -o beginning -e
	[ "${stderr_lines[0]}" = "klog-consume: -p 0 given twice" ]
	run -1 --separate-stderr klog-retain -d "$BROKER_DATA" -t rep -t other \
		--max-age 1d -n
	[[ "$stderr" == *'topic "other": no such topic'* ]]
}
