#!/usr/bin/env bats
# tests/bats/repcheck.py, the checker of the replication fault tests (112)
# and the soak, on hand-made logs: it passes a sound one and catches each
# fault it is there to catch.  No broker, no ZooKeeper.

bats_require_minimum_version 1.5.0
load helpers

PY=/usr/bin/python3
REPCHECK="$BATS_TEST_DIRNAME/repcheck.py"

setup() {
	common_setup
}

teardown() {
	common_teardown
}

# fixture SPEC...: three replica directories $TMP/b1..b3 holding topic r,
# one partition per SPEC (partition i: SPEC i, space-separated records
# such as "0:1 0:2 0:2 0:3"), in segments of at most 3 entries; and
# $TMP/list and $TMP/final as klog-consume -L and -e -f '%p\t%o\t%O\t%s\n'
# would print them.
fixture() {
	"$PY" - "$TMP" "$@" <<-'PY'
	import os, struct, sys, zlib
	tmp, specs = sys.argv[1], sys.argv[2:]
	lst, fin = open(tmp + "/list", "w"), open(tmp + "/final", "w")
	for p, spec in enumerate(specs):
	    recs = spec.split()
	    for b in ("b1", "b2", "b3"):
	        d = "%s/%s/r-%d" % (tmp, b, p)
	        os.makedirs(d)
	        off, base, n, f = 0, 0, 0, None
	        for r in recs:
	            if f is None or n == 3:
	                if f:
	                    f.close()
	                f = open("%s/%020d.klog" % (d, off), "wb")
	                n = 0
	            pl = r.encode()
	            f.write(struct.pack(">IBI", 5 + len(pl), 0, zlib.crc32(pl)) + pl)
	            off += 9 + len(pl)
	            n += 1
	        if f:
	            f.close()
	    off = 0
	    for r in recs:
	        fin.write("%d\t%d\t%d\t%s\n" % (p, off, off + 9 + len(r), r))
	        off += 9 + len(r)
	    lst.write("r\t%d\t0\t%d\n" % (p, off))
	PY
}

repcheck() {
	"$PY" "$REPCHECK" check --topic r --list "$TMP/list" \
		--final "$TMP/final" --dirs "$TMP/b1" "$TMP/b2" "$TMP/b3" "$@"
}

@test "repcheck: a sound log with retry duplicates passes" {
	fixture "0:1 0:2 0:3 0:2 0:3 0:4" "1:1 1:2 1:3"
	head -n 3 "$TMP/final" >"$TMP/seen"
	run -0 repcheck --sent 0=4 1=3 --consumed "$TMP/seen"
	[ "$output" = "repcheck: ok: 2 partitions, 7 acknowledged, 9 in the final log (2 retry duplicates), 3 consumed, replicas identical over 108 bytes" ]
}

@test "repcheck: an acknowledged record missing fails" {
	fixture "0:1 0:2 0:3"
	run -1 repcheck --sent 0=4
	[[ $output == *"partition 0: 1 of 4 acknowledged records lost (first [4])"* ]]
}

@test "repcheck: a record out of order fails" {
	fixture "0:1 0:3 0:2"
	run -1 repcheck --sent 0=3
	[[ $output == *"seq 3 at 12 follows 1"* ]]
}

@test "repcheck: a consumed record not in the final log at its offset fails" {
	fixture "0:1 0:2"
	printf '0\t12\t24\t0:9\n' >"$TMP/seen"
	run -1 repcheck --sent 0=2 --consumed "$TMP/seen"
	[[ $output == *"offset 12: consumed b'0:9'"* ]]
	printf '0\t24\t36\t0:3\n' >"$TMP/seen"
	run -1 repcheck --sent 0=2 --consumed "$TMP/seen"
}

@test "repcheck: replicas differing, short or long fail" {
	fixture "0:1 0:2 0:3 0:4"
	run -0 repcheck --sent 0=4
	# One byte of a follower's payload changed (CRC left alone).
	printf 'X' | dd of="$TMP/b2/r-0/00000000000000000000.klog" bs=1 \
		seek=11 conv=notrunc status=none
	run -1 repcheck --sent 0=4
	[[ $output == *"partition 0: replicas differ over [0, 48)"* ]]
	rm -rf "$TMP"/b? "$TMP/list" "$TMP/final"
	# A follower missing its tail (the newest segment cut).
	fixture "0:1 0:2 0:3 0:4"
	truncate -s 6 "$TMP/b3/r-0/00000000000000000036.klog"
	run -1 repcheck --sent 0=4 --wait 0.3
	[[ $output == *"b3/r-0 ends at 42, committed end 48"* ]]
	rm -rf "$TMP"/b? "$TMP/list" "$TMP/final"
	# A replica with an uncommitted tail it should have truncated.
	fixture "0:1 0:2 0:3 0:4"
	printf '\0\0\0\x08\0\x1e\x1f\x9a\x5b0:5' \
		>>"$TMP/b1/r-0/00000000000000000036.klog"
	run -1 repcheck --sent 0=4
	[[ $output == *"b1/r-0 ends at 60, committed end 48"* ]]
	rm -rf "$TMP"/b? "$TMP/list" "$TMP/final"
	# Identical replicas whose bytes are not what consumers were served.
	fixture "0:1 0:2"
	sed -i 's/0:2$/0:7/' "$TMP/final"
	run -1 repcheck --sent 0=1
	[[ $output == *"bytes over [0, 24) are not the final log's 2 records"* ]]
}

@test "repcheck: a final read that does not reach the committed end fails" {
	fixture "0:1 0:2 0:3"
	sed -i '$d' "$TMP/final"
	run -1 repcheck --sent 0=2
	[[ $output == *"final read ends at 24, committed end 36"* ]]
}

@test "repcheck: topics -J: isr-full and get" {
	local j='{"topic":"r","partition":0,"leader":2,"replicas":[2,3,1],"isr":[1,2,3],"leader_epoch":4}
{"topic":"r","partition":1,"leader":3,"replicas":[3,1,2],"isr":[3,1],"leader_epoch":0}'
	run -1 "$PY" "$REPCHECK" isr-full 2 3 <<<"$j"
	run -0 "$PY" "$REPCHECK" isr-full 1 3 <<<"$(head -n 1 <<<"$j")"
	run -1 "$PY" "$REPCHECK" isr-full 2 3 <<<"$(head -n 1 <<<"$j")"
	run -0 "$PY" "$REPCHECK" get 1 isr <<<"$j"
	[ "$output" = "3,1" ]
	run -0 "$PY" "$REPCHECK" get 0 leader <<<"$j"
	[ "$output" = 2 ]
	run -1 "$PY" "$REPCHECK" get 2 leader <<<"$j"
}

@test "repcheck: gen writes numbered lines until told to stop" {
	("$PY" "$REPCHECK" gen 2 200 "$TMP/stop" "$TMP/count" >"$TMP/out") &
	PIDS+=("$!")
	local pid=$! n=100
	until [ "$(wc -l <"$TMP/out")" -ge 5 ]; do
		n=$((n - 1)); [ "$n" -gt 0 ]; sleep 0.1
	done
	touch "$TMP/stop"
	wait "$pid"
	[ "$(cat "$TMP/count")" -eq "$(wc -l <"$TMP/out")" ]
	[ "$(head -n 2 "$TMP/out")" = "$(printf '2:1\n2:2')" ]
	[ "$(tail -n 1 "$TMP/out")" = "2:$(cat "$TMP/count")" ]
}
