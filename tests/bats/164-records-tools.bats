#!/usr/bin/env bats
# klog's own tools and records with keys, timestamps and headers (issue
# 30): klog-produce -K stores the key, -H adds headers, --timestamp stamps
# CreateTime, each batch of them one magic-2 entry (klog-format(5)),
# compressed with any of Kafka's codecs; klog-consume gives them back
# with kcat's %k %K %T %h and in -J, binary-safe; a mirror
# (klog-consume -J | klog-produce -J) copies them; and kcat, through the
# Kafka listener, reads them as klog-produce wrote them, and the other way.

bats_require_minimum_version 1.5.0
load helpers
load kafka

setup() {
	common_setup
	unset KLOG_ZOOKEEPER KLOG_DATA_DIR
}

teardown() {
	common_teardown
}

now_ms() {
	date +%s%3N
}

# The first (only) segment of partition 0 of topic $1.
segment() {
	echo "$BROKER_DATA/$1-0/00000000000000000000.klog"
}

@test "records: -K, -H and --timestamp come back through -f %k %K %T %h and -J" {
	start_broker
	printf 'user-1\tlogin\nuser-2\tlogout\n\tempty key\nno key here\n' \
		>"$TMP/in"
	t0=$(now_ms)
	klog-produce -t ev -K '\t' --strip-key -H source=tour -H trace \
		-H 'sp ace=a=b' --timestamp <"$TMP/in"
	t1=$(now_ms)
	run -0 klog-consume -t ev -o beginning -e -f '%k|%K|%h|%s\n'
	[ "$output" = "user-1|6|source=tour,trace=,sp ace=a=b|login
user-2|6|source=tour,trace=,sp ace=a=b|logout
|0|source=tour,trace=,sp ace=a=b|empty key
|-1|source=tour,trace=,sp ace=a=b|no key here" ]
	# CreateTime: when klog-produce read them, one time for one read.
	run -0 klog-consume -t ev -o beginning -e -f '%T\n'
	[ "${#lines[@]}" -eq 4 ]
	[ "$(printf '%s\n' "${lines[@]}" | sort -u | wc -l)" -eq 1 ]
	[ "${lines[0]}" -ge "$t0" ]
	[ "${lines[0]}" -le "$t1" ]
	# -J: the members there are, before the payload; null for -H trace.
	ts=${lines[0]}
	run -0 klog-consume -t ev -o beginning -e -c 1 -J
	[ "$output" = '{"topic":"ev","partition":0,"offset":0,"next_offset":0,"size":5,"key":"user-1","timestamp":'"$ts"',"headers":[{"key":"source","value":"tour"},{"key":"trace","value":null},{"key":"sp ace","value":"a=b"}],"payload":"login"}' ]
	run -0 klog-consume -t ev -o beginning -e -J
	[ "$(jq -c 'has("key")' <<<"$output" | tr '\n' ' ')" = \
		"true true true false " ]
	# One magic-2 entry, all four records at its offset, the last one's
	# next offset past it: the whole segment.
	run -0 klog-consume -t ev -o beginning -e -f '%o %O\n'
	[ "${lines[3]}" = "0 $(stat -c %s "$(segment ev)")" ]
	# Plain lines stay the paper's messages: 9 bytes each.
	printf 'a\nbb\n' | klog-produce -t plain
	[ "$(stat -c %s "$(segment plain)")" -eq $((1 + 9 + 2 + 9)) ]
	run -0 klog-consume -t plain -o beginning -e -f '[%k][%K][%T][%h]%s\n'
	[ "$output" = "[][-1][-1][]a
[][-1][-1][]bb" ]
	run -0 klog-consume -t plain -o beginning -e -c 1 -J
	[ "$output" = '{"topic":"plain","partition":0,"offset":0,"next_offset":10,"size":1,"payload":"a"}' ]
}

@test "records: binary keys and header values, base64 in -J, bytes in -f; bookmarks resume at the batch" {
	start_broker
	# A key and a value that are not UTF-8, a header value with a tab.
	printf 'k\xff\x01|v\xfe\n' >"$TMP/in"
	printf 'plain|rest\n' >>"$TMP/in"
	klog-produce -t bin -K '|' --strip-key -H "$(printf 'h=\xc3\xa9\t\xff')" \
		<"$TMP/in"
	klog-consume -t bin -o beginning -e -f '%k=%s;%h\n' >"$TMP/out"
	printf 'k\xff\x01=v\xfe;h=\xc3\xa9\t\xff\nplain=rest;h=\xc3\xa9\t\xff\n' \
		>"$TMP/want"
	cmp "$TMP/want" "$TMP/out"
	run -0 klog-consume -t bin -o beginning -e -c 1 -J
	[ "$(jq -r .key_base64 <<<"$output" | base64 -d | od -An -tx1)" = \
		" 6b ff 01" ]
	[ "$(jq -r .payload_base64 <<<"$output" | base64 -d | od -An -tx1)" = \
		" 76 fe" ]
	[ "$(jq -r '.headers[0].key' <<<"$output")" = h ]
	[ "$(jq -r '.headers[0].value_base64' <<<"$output" | base64 -d |
		od -An -tx1)" = " c3 a9 09 ff" ]
	# An offset file after the first record of the batch holds its start
	# (at-least-once, as inside a gzip wrapper); after both, its end.
	klog-consume -t bin -o beginning -e -c 1 --offset-file "$TMP/off" \
		>/dev/null
	grep -q $'^bin\t0\t0$' "$TMP/off"
	run -0 klog-consume -t bin -e --offset-file "$TMP/off" -f '%s\n'
	[ "$output" = $'v\xfe\nrest' ]
	grep -q $'^bin\t0\t'"$(stat -c %s "$(segment bin)")"'$' "$TMP/off"
}

@test "records: -z gzip, snappy, lz4 and zstd compress the batches as Kafka does" {
	start_broker
	for i in $(seq 3000); do
		printf 'user-%d\tGET /item/%d HTTP/1.1 200\n' $((i % 50)) "$i"
	done >"$TMP/in"
	awk -F'\t' '{ print $1 "|src=a|" $2 }' "$TMP/in" >"$TMP/want"
	klog-produce -t none -K '\t' --strip-key -H src=a --timestamp \
		<"$TMP/in"
	raw=$(stat -c %s "$(segment none)")
	for z in gzip snappy lz4 zstd; do
		klog-produce -t "z$z" -z "$z" -K '\t' --strip-key -H src=a \
			--timestamp <"$TMP/in"
		klog-consume -t "z$z" -o beginning -e -f '%k|%h|%s\n' \
			>"$TMP/out.$z"
		cmp "$TMP/want" "$TMP/out.$z"
		# Compressed: a fraction of the uncompressed entries.
		[ "$(stat -c %s "$(segment "z$z")")" -lt $((raw / 2)) ]
		run -0 klog-consume -t "z$z" -o beginning -e -J
		[ "$(jq -r 'select(.timestamp > 0) | .key' <<<"$output" |
			wc -l)" -eq 3000 ]
	done
	# Plain lines with a codec only a magic-2 entry carries: records
	# without a key.
	seq 1000 | klog-produce -t plainzstd -z zstd
	run -0 klog-consume -t plainzstd -o beginning -e
	[ "$output" = "$(seq 1000)" ]
	run -0 klog-consume -t plainzstd -o beginning -e -f '%K\n'
	[ "$(sort -u <<<"$output")" = -1 ]
	# gzip of plain lines is still the magic-1 wrapper of before.
	seq 1000 | klog-produce -t plaingzip -z gzip
	run -0 klog-dump -n 1 "$BROKER_DATA/plaingzip-0"
	[[ $output == *"magic=1 codec=gzip"* ]]
}

@test "records: a mirror (klog-consume -J | klog-produce -J) keeps keys, timestamps, headers and null values" {
	start_broker
	printf 'k1\tone\nk2\ttwo\nnokey\n' |
		klog-produce -t src -K '\t' --strip-key -H a=1 --timestamp
	printf '%s\n' \
		'{"key_base64":"AP8=","timestamp":5,"headers":[{"key":"n","value":null},{"key_base64":"/w==","value_base64":"AAE="}],"payload":null}' \
		'{"payload":"plain"}' |
		klog-produce -t src -J
	klog-consume -t src -o beginning -e -J |
		klog-produce -t dst -J --source-offset-file "$TMP/bm"
	strip='del(.topic, .offset, .next_offset)'
	klog-consume -t src -o beginning -e -J | jq -c "$strip" >"$TMP/src"
	klog-consume -t dst -o beginning -e -J | jq -c "$strip" >"$TMP/dst"
	[ "$(wc -l <"$TMP/src")" -eq 5 ]
	cmp "$TMP/src" "$TMP/dst"
	run -0 jq -c 'select(.payload == null)' "$TMP/dst"
	[ "$output" = '{"partition":0,"size":0,"key_base64":"AP8=","timestamp":5,"headers":[{"key":"n","value":null},{"key_base64":"/w==","value":"\u0000\u0001"}],"payload":null}' ]
	run -0 klog-consume -t dst -o beginning -e -f '%S %K\n'
	[ "$output" = "3 2
3 2
5 -1
-1 2
5 -1" ]
	# The bookmark holds the source's end: every envelope acknowledged.
	grep -q $'^src\t0\t'"$(stat -c %s "$(segment src)")"'$' "$TMP/bm"
}

@test "records: kcat reads the keys, timestamps and headers klog-produce wrote, and klog-consume kcat's" {
	start_kafka_broker
	printf 'user-1\tlogin\nuser-2\tlogout\nnokey\n' |
		klog-produce -t kc -K '\t' --strip-key -H src=a --timestamp -z lz4
	ts=$(klog-consume -t kc -o beginning -e -c 1 -f '%T')
	run -0 kc -C -t kc -o beginning -e -f '%k|%T|%h|%s\n'
	[ "$output" = "user-1|$ts|src=a|login
user-2|$ts|src=a|logout
|$ts|src=a|nokey" ]
	printf 'k:v\n' | kc -P -t back -K: -H x=y
	run -0 klog-consume -t back -o beginning -e -f '%k|%h|%s\n'
	[ "$output" = "k|x=y|v" ]
}

@test "records: -K with -p stores the keys in the partition named" {
	start_broker --topic two:2
	printf 'a\tone\nb\ttwo\nc\tthree\n' >"$TMP/in"
	klog-produce -t two -p 1 -K '\t' --strip-key <"$TMP/in"
	run -0 klog-consume -t two -p 1 -o beginning -e -f '%p %k %s\n'
	[ "$output" = "1 a one
1 b two
1 c three" ]
	run -0 klog-consume -t two -p 0 -o beginning -e -f '%k %s\n'
	[ -z "$output" ]
}
