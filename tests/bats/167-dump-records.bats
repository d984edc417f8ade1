#!/usr/bin/env bats
# klog-dump on magic-2 entries (issue 30): a Kafka RecordBatch v2 kept as
# one entry, its records with keys, timestamps and headers.  The fixtures
# are tests/data/dump-records.bin and dump-m2-*.bin (tests/data/dump-gen.py
# writes them from Kafka's spec and reads them back with kafka-python); a
# log written before magic 2 is tests/data/pre30-segment.klog.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	common_setup
}

teardown() {
	common_teardown
}

@test "records: a segment written before magic 2 dumps exactly as it did" {
	run -0 bash -c 'klog-dump --deep "$1" | cmp - "$2"' _ \
	    "$DATA/pre30-segment.klog" "$DATA/pre30-segment.dump"
	run -0 --separate-stderr klog-dump --verify --deep "$DATA/pre30-segment.klog"
	[ -z "$stderr" ]
}

@test "records: a magic-2 entry's line has its batch's fields" {
	run -0 --separate-stderr klog-dump "$DATA/dump-records.bin"
	[ "${#lines[@]}" -eq 5 ]
	[ "${lines[1]}" = 'offset=14 pos=14 size=87 magic=2 codec=none crc32c=0xc43ef073 computed=0xc43ef073 status=ok records=3 timestamp_type=CreateTime first_timestamp=1700000000000 max_timestamp=1700000001234' ]
	[ "${lines[2]}" = 'offset=111 pos=111 size=86 magic=2 codec=gzip crc32c=0x65e19dd0 computed=0x65e19dd0 status=ok records=2 timestamp_type=CreateTime first_timestamp=1700000060000 max_timestamp=1700000060001 producer_id=1000 producer_epoch=2 base_sequence=5' ]
	[ "${lines[3]}" = 'offset=207 pos=207 size=55 magic=2 codec=none crc32c=0xd222c65b computed=0xd222c65b status=ok records=1 timestamp_type=LogAppendTime first_timestamp=1700000000000 max_timestamp=1700003600000' ]
	[[ "${lines[4]}" == 'offset=272 pos=272 '*'payload="end"' ]]
	[ -z "$stderr" ]
}

@test "records: --deep shows each record, its Kafka offset, time, key, headers" {
	run -0 klog-dump --deep "$DATA/dump-records.bin"
	[ "${#lines[@]}" -eq 11 ]
	[ "${lines[2]}" = '  offset=14 kafka_offset=14 pos=14 size=2 magic=2 timestamp=1700000000000 time=2023-11-14T22:13:20.000Z key="k1" headers="h=x" payload="v1"' ]
	[ "${lines[3]}" = '  offset=14 kafka_offset=15 pos=14 size=3 magic=2 timestamp=1700000000005 time=2023-11-14T22:13:20.005Z payload="two"' ]
	[ "${lines[4]}" = '  offset=14 kafka_offset=16 pos=14 size=0 magic=2 timestamp=1700000001234 time=2023-11-14T22:13:21.234Z key="\x00\xff" headers="bin=\xff\x00,nul" payload=null' ]
	# gzip-compressed records, opened.
	[ "${lines[6]}" = '  offset=111 kafka_offset=111 pos=111 size=5 magic=2 timestamp=1700000060000 time=2023-11-14T22:14:20.000Z key="a" payload="alpha"' ]
	[[ "${lines[7]}" == '  offset=111 kafka_offset=112 '*'key="b" payload="bravo"' ]]
	# LogAppendTime: the broker's time, the batch's maxTimestamp.
	[ "${lines[9]}" = '  offset=207 kafka_offset=207 pos=207 size=8 magic=2 timestamp=1700003600000 time=2023-11-14T23:13:20.000Z payload="appended"' ]
	# -P cuts keys as payloads; 0 leaves key, headers and payload out.
	run -0 klog-dump --deep -P 1 -n 2 "$DATA/dump-records.bin"
	[[ "${lines[2]}" == *' key="k"... headers="h=x" payload="v"...' ]]
	run -0 klog-dump --deep -P 0 -n 2 "$DATA/dump-records.bin"
	[ "${lines[2]}" = '  offset=14 kafka_offset=14 pos=14 size=2 magic=2 timestamp=1700000000000 time=2023-11-14T22:13:20.000Z' ]
}

@test "records: -J --deep gives the record's members as klog-consume -J does" {
	run -0 bash -c 'klog-dump -J --deep "$1" | jq -c "select(.depth == 1) | [.offset, .next_offset, .kafka_offset, .key, .key_base64, .timestamp, .headers, .payload]"' _ "$DATA/dump-records.bin"
	[ "${#lines[@]}" -eq 6 ]
	[ "${lines[0]}" = '[14,14,14,"k1",null,1700000000000,[{"key":"h","value":"x"}],"v1"]' ]
	[ "${lines[1]}" = '[14,14,15,null,null,1700000000005,null,"two"]' ]
	[ "${lines[2]}" = '[14,111,16,null,"AP8=",1700000001234,[{"key":"bin","value_base64":"/wA="},{"key":"nul","value":null}],null]' ]
	[ "${lines[4]}" = '[111,207,112,"b",null,1700000060001,null,"bravo"]' ]
	# The entry: its batch's fields; no "key" where there is none.
	run -0 bash -c 'klog-dump -J "$1" | jq -c "select(.magic == 2) | [.records, .timestamp_type, .producer_id, .producer_epoch, .base_sequence, has(\"key\")]"' _ "$DATA/dump-records.bin"
	[ "${lines[0]}" = '[3,"CreateTime",null,null,null,false]' ]
	[ "${lines[1]}" = '[2,"CreateTime",1000,2,5,false]' ]
	[ "${lines[2]}" = '[1,"LogAppendTime",null,null,null,false]' ]
}

@test "records: -s counts batches, records and codecs" {
	run -0 klog-dump -s "$DATA/dump-records.bin"
	[ "$output" = "$DATA/dump-records.bin: base=0 first=0 next=284 entries=5 messages=5 batches=3 records=6 payload_bytes=236 overhead_bytes=48 overhead_per_msg=9.60 codecs=none:4,gzip:1,snappy:0,lz4:0,zstd:0 crc_errors=0 corrupt=0 unchecked=0 partial_bytes=0 status=ok" ]
	run -0 bash -c 'klog-dump -s -J --deep "$1" | jq -c "[.messages, .batches, .records, .codecs.gzip]"' _ "$DATA/dump-records.bin"
	[ "$output" = '[8,3,6,1]' ]
	run -0 --separate-stderr klog-dump --verify --deep "$DATA/dump-records.bin"
	[ -z "$stderr" ]
}

@test "records: --verify finds a CRC-32C mismatch: 1, and the dump goes on" {
	run -1 --separate-stderr klog-dump --verify "$DATA/dump-m2-crc.bin"
	[ -z "$output" ]
	[ "$stderr" = "klog-dump: $DATA/dump-m2-crc.bin: offset 0 (byte 0x0): crc32c mismatch (stored 0x608f8442, computed 0x088ca88a)" ]
	run -65 --separate-stderr klog-dump --deep "$DATA/dump-m2-crc.bin"
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[0]}" == *' status=crc-mismatch records=1 '* ]]
	[[ "${lines[1]}" == *'payload="after"' ]]
}

@test "records: --verify finds a batch's field wrong: 1, and the dump goes on" {
	run -1 --separate-stderr klog-dump --verify "$DATA/dump-m2-delta.bin"
	[ "$stderr" = "klog-dump: $DATA/dump-m2-delta.bin: offset 0 (byte 0x0): magic-2 entry: batch's last offset delta is not its length + 3" ]
	run -65 --separate-stderr klog-dump "$DATA/dump-m2-delta.bin"
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[0]}" == 'offset=0 pos=0 size=55 magic=2 '*' status=ok records=1 '* ]]
	[[ "${lines[1]}" == 'offset=65 '*'payload="after"' ]]
	run -65 bash -c 'klog-dump -s -J "$1" 2>/dev/null | jq -c "[.entries, .batches, .corrupt, .next_offset, .status]"; exit "${PIPESTATUS[0]}"' _ "$DATA/dump-m2-delta.bin"
	[ "$output" = '[2,1,1,79,"corrupt"]' ]
	# -o past it: its length frames it, as for any entry.
	run -0 klog-dump -o 65 "$DATA/dump-m2-delta.bin"
	[[ "$output" == 'offset=65 '*'payload="after"' ]]
}

@test "records: --verify --deep finds a record out of order; shallow does not look" {
	run -0 --separate-stderr klog-dump --verify "$DATA/dump-m2-record.bin"
	[ -z "$stderr" ]
	run -1 --separate-stderr klog-dump --verify --deep "$DATA/dump-m2-record.bin"
	[ "$stderr" = "klog-dump: $DATA/dump-m2-record.bin: offset 0 (byte 0x0): magic-2 entry: record offset delta out of order" ]
	run -65 --separate-stderr klog-dump --deep "$DATA/dump-m2-record.bin"
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[1]}" == *'payload="after"' ]]
}

@test "records: --salvage finds magic-2 entries after junk and prints their records" {
	mkdir "$TMP/t-0"
	{ printf 'junk!!!'; cat "$DATA/dump-records.bin"; } >"$TMP/t-0/00000000000000001000.salvage"
	run -0 --separate-stderr klog-dump --salvage -v "$TMP/t-0"
	[ "${#lines[@]}" -eq 8 ]
	[[ $stderr == *"8 messages from 1 salvage file, 7 bytes in no valid message"* ]]
	echo "${lines[1]}" | jq -e '.topic == "t" and .offset == 1021 and .payload == "v1"'
	echo "${lines[4]}" | jq -e '.offset == 1118 and .payload == "alpha"'
	echo "${lines[7]}" | jq -e '.offset == 1279 and .payload == "end"'
	# A record keeps its key, timestamp and headers, binary ones too.
	echo "${lines[1]}" | jq -e '.key == "k1" and .timestamp == 1700000000000 and .headers == [{"key":"h","value":"x"}]'
	echo "${lines[3]}" | jq -e '.key_base64 == "AP8=" and .payload == null and .headers[1] == {"key":"nul","value":null}'
	echo "${lines[0]}" | jq -e 'has("key") or has("timestamp") or has("headers") | not'
}

# What --salvage and -J --deep print of records, klog-produce -J sends back
# with their keys, timestamps and headers.
@test "records: --salvage and -J --deep output goes back through klog-produce -J" {
	mkdir "$TMP/t-0"
	{ printf 'junk!!!'; cat "$DATA/dump-records.bin"; } >"$TMP/t-0/00000000000000001000.salvage"
	start_broker
	klog-dump --salvage "$TMP/t-0" | klog-produce -J -t back -a all
	klog-dump -J --deep "$DATA/dump-records.bin" | jq -c 'select(.magic != 2 or .depth == 1)' |
	    klog-produce -J -t deep -a all
	want='["plain",null,null,null]
["v1","k1",1700000000000,[{"key":"h","value":"x"}]]
["two",null,1700000000005,null]
[null,null,1700000001234,[{"key":"bin","value_base64":"/wA="},{"key":"nul","value":null}]]
["alpha","a",1700000060000,null]
["bravo","b",1700000060001,null]
["appended",null,1700003600000,null]
["end",null,null,null]'
	for t in back deep; do
		run -0 bash -c 'klog-consume -t "$1" -o beginning -e -J | jq -c "[.payload, .key, .timestamp, .headers]"' _ "$t"
		[ "$output" = "$want" ] || { echo "$t: $output"; false; }
	done
	run -0 bash -c 'klog-consume -t back -o beginning -e -J | jq -r ".key_base64 // empty"'
	[ "$output" = 'AP8=' ]
	# What klog-produce -K -H --timestamp wrote, as klog-dump shows it.
	printf 'k1\tv1\n' | klog-produce -t kh -K '\t' --strip-key -H a=1 --timestamp -a all
	run -0 klog-dump --deep "$BROKER_DATA/kh-0"
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[0]}" == 'offset=0 pos=0 '*' magic=2 codec=none crc32c='*' status=ok records=1 timestamp_type=CreateTime '* ]]
	[[ "${lines[1]}" == '  offset=0 kafka_offset=0 pos=0 size=2 magic=2 timestamp='*' time=20'*'Z key="k1" headers="a=1" payload="v1"' ]]
}

# What a Kafka producer stored through the Kafka listener: klog-dump's Kafka
# offsets, keys, headers and timestamps are the ones kcat reads back.
@test "records: kcat's batches, gzip and plain, as klog-dump shows them and kcat reads them" {
	load kafka
	unset KLOG_BROKERS KLOG_ZOOKEEPER KLOG_DATA_DIR
	start_kafka_broker --topic kd:1
	# Lines that compress, or librdkafka sends them uncompressed.
	seq 1 20 | awk '{ print "k" $1 ":GET /item/" $1 " HTTP/1.1 200 curl/8.5" }' |
	    kc -P -t kd -p 0 -K: -H h=x -z gzip
	printf ':v21\n' | kc -P -t kd -p 0 -K: -H a=1 -H b=2
	seg="$BROKER_DATA/kd-0/00000000000000000000.klog"
	run -0 --separate-stderr klog-dump --verify --deep "$seg"
	[ -z "$stderr" ]
	run -0 kc -C -t kd -p 0 -o beginning -e -f '%o %k %h %T %s\n'
	want=$output
	[ "${#lines[@]}" -eq 21 ]
	run -0 bash -c 'klog-dump -J --deep "$1" | jq -r "select(.depth == 1) | \"\(.kafka_offset) \(.key // \"\") \(.headers | map(\"\(.key)=\(.value)\") | join(\",\")) \(.timestamp) \(.payload)\""' _ "$seg"
	[ "$output" = "$want" ]
	# The gzip batches are stored compressed, as they came.
	run -0 bash -c 'klog-dump -s -J "$1" | jq -c "[.records, .codecs.gzip > 0, .codecs.none > 0]"' _ "$seg"
	[ "$output" = '[21,true,true]' ]
}
