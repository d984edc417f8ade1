#!/usr/bin/env bats
# klog-dump -J: NDJSON that jq accepts whatever the payloads and the damage,
# and that gives every payload back byte for byte.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	common_setup
}

teardown() {
	common_teardown
}

@test "json: one valid object per message, with the envelope fields" {
	run -0 bash -c 'klog-dump -J "$1" | jq -e -s "length == 7"' _ "$DATA/dump-valid.bin"
	run -0 bash -c 'klog-dump -J "$1" | jq -c -s ".[0]"' _ "$DATA/dump-valid.bin"
	[ "$output" = "{\"file\":\"$DATA/dump-valid.bin\",\"offset\":0,\"next_offset\":14,\"pos\":0,\"length\":10,\"size\":5,\"magic\":0,\"attributes\":0,\"codec\":\"none\",\"depth\":0,\"crc\":907060870,\"crc_computed\":907060870,\"valid\":true,\"payload\":\"hello\"}" ]
	run -0 bash -c 'klog-dump -J "$1" | jq -r -s ".[2].payload_base64, .[3].payload, .[5].codec, .[6].payload"' _ "$DATA/dump-valid.bin"
	[ "${lines[0]}" = "AAH+/yBiaW5hcnk=" ]
	[ "${lines[1]}" = "héllo €" ]
	[ "${lines[2]}" = "gzip" ]
	[ "${lines[3]}" = 'q"b\n' ]
	[ "${lines[4]}" = $'t\t end' ]
}

@test "json: offsets chain: each next_offset is the following offset" {
	run -0 bash -c 'klog-dump -J "$1" | jq -e -s "[.[:-1], .[1:]] | transpose | all(.[0].next_offset == .[1].offset)"' _ "$DATA/dump-valid.bin"
	run -0 bash -c 'klog-dump -J "$1" | jq -e -s ".[-1].next_offset == 169 and all(.next_offset == .offset + 4 + .length)"' _ "$DATA/dump-valid.bin"
}

@test "json: --deep gives inner messages the wrapper's offset" {
	run -0 bash -c 'klog-dump -J --deep "$1" | jq -c "select(.depth == 1) | [.offset, .next_offset, .payload]"' _ "$DATA/dump-valid.bin"
	[ "${#lines[@]}" -eq 3 ]
	[ "${lines[0]}" = '[81,81,"one"]' ]
	[ "${lines[1]}" = '[81,81,"two"]' ]
	[ "${lines[2]}" = '[81,148,"three"]' ]
}

@test "json: corrupt messages are valid JSON too, marked valid:false" {
	run -65 --separate-stderr bash -c 'klog-dump -J "$1" | jq -c "[.offset, .valid, .payload]"; exit "${PIPESTATUS[0]}"' _ "$DATA/dump-crc.bin"
	[ "${lines[1]}" = '[14,false,"cravo"]' ]
	[ "${#lines[@]}" -eq 3 ]
	run -0 bash -c 'klog-dump -J --deep "$1" | jq -e -s "map(select(.valid == false)) | length == 1 and .[0].payload == \"cad\""' _ "$DATA/dump-deepbad.bin"
}

@test "json: every fixture gives valid NDJSON, whatever the exit status" {
	local f
	for f in "$DATA"/dump-*.bin; do
		klog-dump -J --deep "$f" 2>/dev/null >"$TMP/out" || true
		jq -e -s 'type == "array"' "$TMP/out" >/dev/null
		# One object per line.
		[ "$(jq -c . "$TMP/out" | wc -l)" -eq "$(wc -l <"$TMP/out")" ]
	done
}

@test "json: payloads of every byte pattern come back byte for byte" {
	python3 - "$TMP/seg" "$TMP/want" <<'PY'
import random, struct, sys, zlib
rnd = random.Random(7)
pays = [b"", b"\x00", b"\x7f", b"\xff", b"\xc0\xaf", b"\xed\xa0\x80",
        b"\xf4\x90\x80\x80", b"\xe2\x82", "h\u00e9\U0001f600".encode(),
        bytes(range(32)), b'"\\/', bytes(range(256))]
pays += [bytes(rnd.randrange(256) for _ in range(rnd.randrange(64)))
         for _ in range(200)]
with open(sys.argv[1], "wb") as f:
    for p in pays:
        f.write(struct.pack(">IBI", 5 + len(p), 0, zlib.crc32(p)) + p)
with open(sys.argv[2], "w") as f:
    for p in pays:
        f.write(p.hex() + "\n")
PY
	klog-dump -J "$TMP/seg" >"$TMP/json"
	python3 - "$TMP/json" "$TMP/got" <<'PY'
import base64, json, sys
with open(sys.argv[1], "rb") as f, open(sys.argv[2], "w") as out:
    for line in f:
        o = json.loads(line)
        if "payload" in o:
            p = o["payload"].encode("utf-8", "surrogatepass")
        else:
            p = base64.b64decode(o["payload_base64"], validate=True)
        assert o["size"] == len(p) and o["valid"] is True
        out.write(p.hex() + "\n")
PY
	cmp "$TMP/want" "$TMP/got"
	# jq agrees the stream is JSON.
	jq -e -s 'length == 212' "$TMP/json" >/dev/null
}

@test "json: a file name that is not UTF-8 still makes valid JSON" {
	local name
	name="$TMP/seg-$(printf '\377')\"x.bin"
	cp "$DATA/dump-valid.bin" "$name"
	run -0 bash -c 'klog-dump -J -n 1 "$1" | jq -r .file' _ "$name"
	[ "$output" = "$TMP/seg-�\"x.bin" ]
}

@test "json: -s -J gives one summary object per file" {
	run -0 bash -c 'klog-dump -s -J "$1" | jq -c "[.first_offset, .next_offset, .entries, .messages, .payload_bytes, .overhead_bytes, .overhead_per_message, .codecs.none, .codecs.gzip, .status]"' _ "$DATA/dump-valid.bin"
	[ "$output" = '[0,169,7,7,104,65,9.29,6,1,"ok"]' ]
	run -0 bash -c 'klog-dump -s -J --deep "$1" | jq .messages' _ "$DATA/dump-valid.bin"
	[ "$output" = 9 ]
	run -65 bash -c 'klog-dump -s -J "$1" "$2" "$3" 2>/dev/null | jq -c "[.status, .partial_bytes, .crc_errors, .next_offset]"; exit "${PIPESTATUS[0]}"' _ \
	    "$DATA/dump-truncated.bin" "$DATA/dump-crc.bin" "$DATA/dump-notseg.bin"
	[ "${lines[0]}" = '["partial",10,0,28]' ]
	[ "${lines[1]}" = '["crc-mismatch",0,1,44]' ]
	[ "${lines[2]}" = '["corrupt",0,0,0]' ]
}

@test "summary: text figures match the fixture" {
	run -0 klog-dump -s "$DATA/dump-valid.bin"
	[ "$output" = "$DATA/dump-valid.bin: base=0 first=0 next=169 entries=7 messages=7 batches=0 records=0 payload_bytes=104 overhead_bytes=65 overhead_per_msg=9.29 codecs=none:6,gzip:1,snappy:0,lz4:0,zstd:0 crc_errors=0 corrupt=0 unchecked=0 partial_bytes=0 status=ok" ]
	run -65 klog-dump -s "$DATA/dump-truncated.bin"
	[[ "$output" == *' first=0 next=28 entries=2 messages=2 batches=0 records=0 payload_bytes=10 overhead_bytes=18 overhead_per_msg=9.00 '*' partial_bytes=10 status=partial' ]]
}
