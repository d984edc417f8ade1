#!/usr/bin/env bats
# klog-produce against a real klog-serve: records and delimiters, sizes,
# acks, statistics, usage errors and exit codes.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	common_setup
}

teardown() {
	common_teardown
}

# consume_all TOPIC: every message of TOPIC so far, one per line.
consume_all() {
	klog-consume -t "$1" -o beginning -e "${@:2}"
}

@test "produce: -h prints usage on stdout, --version the version" {
	run -0 --separate-stderr klog-produce -h
	[[ "${lines[0]}" == "usage: klog-produce "* ]]
	[ -z "$stderr" ]
	run -0 klog-produce --help
	[[ "$output" == *"--key-delimiter"* ]]
	run -0 klog-produce --version
	[ "$output" = "klog-produce 0.1.0" ]
}

@test "produce: usage errors exit 64 with one line and a hint" {
	run -64 --separate-stderr klog-produce
	[ "$stderr" = "klog-produce: no topic given (-t)
Try 'klog-produce -h'" ]
	run -64 --separate-stderr klog-produce -t x --bogus
	[ "${stderr_lines[0]}" = "klog-produce: --bogus: unknown option" ]
	run -64 --separate-stderr klog-produce -t x -Y
	[ "${stderr_lines[0]}" = "klog-produce: -Y: unknown option" ]
	run -64 --separate-stderr klog-produce -t
	[ "${stderr_lines[0]}" = "klog-produce: -t: option needs an argument" ]
	run -64 --separate-stderr klog-produce -t x -a 2
	[ "${stderr_lines[0]}" = "klog-produce: -a 2: expected 0, 1 or all" ]
	run -64 --separate-stderr klog-produce -t x -z brotli
	[ "${stderr_lines[0]}" = "klog-produce: -z brotli: expected gzip, snappy, lz4, zstd or none" ]
	run -64 --separate-stderr klog-produce -t x -H a=1 -H b -H c=3 -H c=4 -z lz4 -t x
	[ "${stderr_lines[0]}" = "klog-produce: -t given twice" ]
	run -64 --separate-stderr klog-produce -t x --batch 0
	[ "${stderr_lines[0]}" = "klog-produce: --batch 0: too small" ]
	run -64 --separate-stderr klog-produce -t x -p 1x
	[ "${stderr_lines[0]}" = "klog-produce: -p 1x: invalid" ]
	run -64 --separate-stderr klog-produce -t x -J -K ,
	[ "${stderr_lines[0]}" = "klog-produce: -J and -K cannot be used together" ]
	run -64 --separate-stderr klog-produce -t x --strip-key
	[ "${stderr_lines[0]}" = "klog-produce: --strip-key needs -K" ]
	run -64 --separate-stderr klog-produce -t x -D '\q'
	[ "${stderr_lines[0]}" = "klog-produce: -D \\q: \\q: unknown escape" ]
	run -64 --separate-stderr klog-produce -t x extra
	[ "${stderr_lines[0]}" = "klog-produce: extra: unexpected argument" ]
	run -64 --separate-stderr klog-produce -t x -b 'h:1,,h:2'
	[[ "${stderr_lines[0]}" == "klog-produce: -b h:1,,h:2: "* ]]
}

@test "produce: an invalid topic name is a usage error (64)" {
	run -64 --separate-stderr klog-produce -t 'a/b' </dev/null
	[[ "${stderr_lines[0]}" == 'klog-produce: topic "a/b": '* ]]
	run -64 --separate-stderr klog-produce -t '..' </dev/null
	run -64 --separate-stderr klog-produce -t '' </dev/null
}

@test "produce: no broker listening: exit 69 with one line" {
	local port
	port=$(free_port)
	run -69 --separate-stderr klog-produce -b "127.0.0.1:$port" -t t \
		<<<"x"
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "klog-produce: "*"127.0.0.1:$port: Connection refused"* ]]
	KLOG_BROKERS="127.0.0.1:$port" run -69 klog-produce -t t <<<"x"
}

@test "produce: lines in, the same lines out; empty lines kept" {
	start_broker
	printf 'one\n\ntwo\n\n\nthree\n' | klog-produce -t t -a all
	run -0 consume_all t -f '[%s]\n'
	[ "$output" = "[one]
[]
[two]
[]
[]
[three]" ]
}

@test "produce: a last line without newline is a record; a final newline makes none" {
	start_broker
	printf 'a\nb' | klog-produce -t t -a all
	printf 'c\n' | klog-produce -t t -a all
	run -0 consume_all t -f '%s|'
	[ "$output" = "a|b|c|" ]
	klog-produce -t empty -a all </dev/null
	run -0 consume_all empty
	[ -z "$output" ]
}

@test "produce: -D multi-byte delimiter and -0" {
	start_broker
	printf 'x<>y<><>z' | klog-produce -t t -D '<>' -a all
	run -0 consume_all t -f '[%s]'
	[ "$output" = "[x][y][][z]" ]
	printf 'one\0two\nlines\0' | klog-produce -t n -0 -a all
	run -0 consume_all n -D '\0'
	printf 'one\0two\nlines\0' >"$TMP/want"
	cmp "$TMP/want" <(consume_all n -D '\0')
}

@test "produce: a record over --max-message is skipped with a warning; the rest go, exit 1" {
	start_broker
	{ echo small; echo second; head -c 2000 /dev/zero | tr '\0' x; echo;
		echo after; } >"$TMP/in"
	run -1 --separate-stderr klog-produce -t t --max-message 1000 -a all \
		<"$TMP/in"
	[ "$stderr" = "klog-produce: record 3: over the maximum message size of 1000 bytes (--max-message here, --max-message-bytes on the broker); skipped
klog-produce: 1 record over 1000 bytes skipped" ]
	run -0 consume_all t
	[ "$output" = "small
second
after" ]
}

@test "produce: --stop-on-oversize ends at the first record too long, exit 1" {
	start_broker
	{ echo small; head -c 2000 /dev/zero | tr '\0' x; echo;
		echo after; } >"$TMP/in"
	run -1 --separate-stderr klog-produce -t t --max-message 1000 -a all \
		--stop-on-oversize <"$TMP/in"
	[ "$stderr" = "klog-produce: record 2: over the maximum message size of 1000 bytes (--max-message here, --max-message-bytes on the broker); not sent" ]
	run -0 consume_all t
	[ "$output" = "small" ]
}

@test "produce: a line longer than the input buffer streams past; -J too" {
	start_broker
	# 9 MB without a newline is more than the input holds: it is
	# dropped as it comes, and the records after it still go.
	{ echo first; head -c 9000000 /dev/zero | tr '\0' z; echo;
		echo last; } >"$TMP/in"
	run -1 --separate-stderr klog-produce -t t --max-message 1000 -a all \
		<"$TMP/in"
	[ "${stderr_lines[0]}" = "klog-produce: record 2: over the maximum message size of 1000 bytes (--max-message here, --max-message-bytes on the broker); skipped" ]
	run -0 consume_all t
	[ "$output" = "first
last" ]
	# -J: the decoded payload is what is measured.
	{ echo '{"payload":"j1"}'
		printf '{"payload":"%s"}\n' "$(head -c 1500 /dev/zero | tr '\0' q)"
		echo '{"payload":"j3"}'; } >"$TMP/in.json"
	run -1 --separate-stderr klog-produce -t j -J --max-message 1000 \
		-a all <"$TMP/in.json"
	[ "${stderr_lines[0]}" = "klog-produce: record 2: over the maximum message size of 1000 bytes (--max-message here, --max-message-bytes on the broker); skipped" ]
	run -0 consume_all j
	[ "$output" = "j1
j3" ]
}

@test "produce: --batch 1, a request per record: more read at once than may be queued, all in order" {
	start_broker
	# A pipe read brings thousands of records; the producer holds at
	# most 2 x 1,024 requests, so reading waits while the rest are sent,
	# the last ones after EOF.
	seq 1 30000 | klog-produce -t t --batch 1 -v 2>"$TMP/err"
	grep -q '^klog-produce: 30000 records, 30000 acknowledged' "$TMP/err"
	seq 30001 60000 >"$TMP/in"
	klog-produce -t t --batch 1 -a all <"$TMP/in"
	cmp <(seq 1 60000) <(consume_all t)
}

@test "produce: acks all and acks 0 both deliver; -v counts" {
	start_broker
	seq 1 5000 | klog-produce -t t -a all -v 2>"$TMP/err"
	grep -q '^klog-produce: 5000 records, 5000 acknowledged, 0 refused' \
		"$TMP/err"
	seq 5001 10000 | klog-produce -t t -a 0 -v 2>"$TMP/err"
	grep -q '^klog-produce: 5000 records, 5000 written' "$TMP/err"
	# acks 0: written is not yet stored; wait for the broker to show it.
	local n=100
	while [ "$(consume_all t | wc -l)" -lt 10000 ] && [ $n -gt 0 ]; do
		sleep 0.1
		n=$((n - 1))
	done
	cmp <(seq 1 10000) <(consume_all t)
}

@test "produce: -q prints nothing on success" {
	start_broker
	run -0 --separate-stderr klog-produce -t t -q <<<"hello"
	[ -z "$stderr" ]
	[ -z "$output" ]
}

@test "produce: a batch the broker refuses: its reason, a count, exit 1" {
	start_broker --max-message-bytes 100
	echo ok | klog-produce -t t
	{ echo before; head -c 200 /dev/zero | tr '\0' y; echo; } >"$TMP/in"
	run -1 --separate-stderr klog-produce -t t <"$TMP/in"
	[ "${stderr_lines[0]}" = 'klog-produce: topic "t" partition 0: MESSAGE_TOO_LARGE' ]
	[ "${stderr_lines[1]}" = 'klog-produce: 0 of 2 records acknowledged, 2 not' ]
	[ "${stderr_lines[2]}" = "klog-produce: a record was over the broker's --max-message-bytes, which is below this producer's --max-message of 1000000 bytes" ]
	run -0 klog-consume -t t -o beginning -e
	[ "$output" = "ok" ]
}

# Issue 18 #5: which records the broker holds, where: a delivery report.
@test "produce: --report names every record's partition and offset, or its error" {
	start_broker --topic rep:1
	printf 'a\nbb\nccc\n' | klog-produce -t rep --report "$TMP/r"
	run -0 cat "$TMP/r"
	[ "$output" = '{"record":1,"partition":0,"offset":0}
{"record":2,"partition":0,"offset":10}
{"record":3,"partition":0,"offset":21}' ]
	# The offsets are where the records are.
	while read -r line; do
		off=$(jq -r .offset <<<"$line")
		n=$(jq -r .record <<<"$line")
		[ "$(klog-consume -t rep -o "$off" -c 1)" = "$(printf 'a\nbb\nccc\n' | sed -n "${n}p")" ]
	done <"$TMP/r"
	# -J numbers records, not lines; a record too big has no line (and
	# exit 1).
	printf '{"payload":"x"}\n\n{"payload":"yyyyyyyyyyyy"}\n{"payload":"z"}\n' |
		klog-produce -t rep -J --max-message 5 --report - >"$TMP/g" || true
	[ "$(jq -s 'map(.record) == [1, 3]' "$TMP/g")" = true ]
	# A gzip batch: every record at the batch's offset, as klog-consume
	# shows them.
	seq 100 | klog-produce -t rep -z gzip --report "$TMP/z"
	[ "$(jq -s 'map(.record) | sort == [range(1; 101)]' "$TMP/z")" = true ]
	[ "$(jq -s 'map(.offset) | unique | length' "$TMP/z")" = 1 ]
	[ "$(klog-consume -t rep -o "$(jq -r .offset "$TMP/z" | head -1)" -c 1)" = 1 ]
	run -64 klog-produce -t rep -K : --report -
	run -74 bash -c "echo x | klog-produce -t rep --report /dev/full"
}

@test "produce: --report says why the broker refused a record" {
	start_broker --max-message-bytes 1000
	head -c 2000 /dev/zero | tr '\0' x >"$TMP/big"
	run -1 --separate-stderr klog-produce -t big --report - <"$TMP/big"
	[ "$output" = '{"record":1,"partition":0,"error":"MESSAGE_TOO_LARGE"}' ]
}
