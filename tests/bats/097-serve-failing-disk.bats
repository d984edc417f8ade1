#!/usr/bin/env bats
# klog-serve on a disk whose writes start failing (klog-serve(1), "A
# failing disk"): a failed fsync is final.  The recipe of issue 25: an
# ext4 on a loop device whose image is a sparse file in a small tmpfs
# (failing_disk.bash), so that writes into the page cache succeed and their
# write-back fails once the tmpfs is full; Linux then reports the error to
# one fsync and may return 0 to the next, although the data never reached
# the disk.  Numbered 200-byte records go in with acks=all and a delivery
# report; after the failure the tmpfs is grown, the file system checked and
# mounted again (what a reboot finds), and every record the report says was
# acknowledged must be on it, at its offset.  Needs root, loop devices and
# mount (CI has them); skips with a message otherwise.  The first test needs
# none of that: klog-dump and --salvage naming the zeros a lost write-back
# leaves.

bats_require_minimum_version 1.5.0
load helpers
load failing_disk
load kafka
load replication

setup() {
	common_setup
	unset KLOG_ZOOKEEPER KLOG_BROKERS
}

teardown() {
	local pid
	# A busy file system cannot be unmounted: the processes go first.
	for pid in "${PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null
		wait_gone "$pid" 5
	done
	[ -z "${ZK_PID:-}" ] || stop_zk
	failing_disk_teardown
	common_teardown
}

# check_acked REPORT DUMP: every record the delivery report says was
# acknowledged is in DUMP (klog-dump -J of the partition) at its offset,
# with its payload (record N is N, zero-padded to 200 digits).  Prints how
# many were acknowledged.
check_acked() {
	/usr/bin/python3 - "$1" "$2" <<-'EOF'
	import json, sys
	have = {}
	for line in open(sys.argv[2]):
	    m = json.loads(line)
	    if m.get("valid"):
	        have[m["offset"]] = m["payload"]
	acked = lost = 0
	for line in open(sys.argv[1]):
	    r = json.loads(line)
	    if r.get("offset") is None:
	        continue
	    acked += 1
	    if have.get(r["offset"]) != "%0200d" % r["record"]:
	        lost += 1
	        if lost <= 5:
	            print("lost: record %d at offset %d" % (r["record"], r["offset"]),
	                  file=sys.stderr)
	assert lost == 0, "%d of %d acknowledged records lost" % (lost, acked)
	print(acked)
	EOF
}

# scrape PORT NAME: the value of metric NAME.
scrape() {
	curl -sf "http://127.0.0.1:$1/metrics" | awk -v n="$2" '$1 == n { print $2 }'
}

@test "failing disk: klog-dump names the zeros a lost write-back leaves; --salvage counts them" {
	start_broker
	seq -f 'rec%06g' 1 3000 | klog-produce -t z -a all
	kill -TERM "$BROKER_PID"
	wait_gone "$BROKER_PID" 10
	seg=$BROKER_DATA/z-0/00000000000000000000.klog
	# 8 KiB of zeros in the middle, as a write-back the disk lost reads.
	dd if=/dev/zero of="$seg" bs=4096 seek=5 count=2 conv=notrunc status=none
	run -65 --separate-stderr klog-dump -s "$BROKER_DATA/z-0"
	[[ "$stderr" =~ offset\ [0-9]+\ \(byte\ 0x[0-9a-f]+\):\ [0-9]+\ zero\ bytes,\ as\ a\ write\ the\ disk\ never\ got\ leaves ]]
	rm "$BROKER_DATA/.klog_cleanshutdown"
	start_broker
	kill -TERM "$BROKER_PID"
	wait_gone "$BROKER_PID" 10
	grep -q 'recovery truncated' "$TMP/broker.log"
	run -0 --separate-stderr klog-dump -v --salvage "$BROKER_DATA/z-0"
	[[ "$stderr" =~ bytes\ in\ no\ valid\ message\ \(([0-9]+)\ of\ them\ zero\) ]]
	[ "${BASH_REMATCH[1]}" -ge 8192 ]
}

@test "failing disk: no acknowledged record lost, writes refused after a failed sync, no clean-shutdown marker" {
	local mport acked st
	failing_disk_setup 50
	mport=$(free_port)
	BROKER_DATA=$FD_MNT/data
	# 1 MiB segments: the bytes the failed sync lost span rolls.
	start_kafka_broker --metrics-listen "127.0.0.1:$mport" \
		--segment-bytes 1M
	echo 0 | klog-produce -t f -a all
	failing_disk_sync
	# 70 MB of records into about 45 MB of room.
	seq -f '%0200.0f' 1 350000 >"$TMP/in"
	run klog-produce -t f -a all --retry-for 2s --report "$TMP/report" \
		<"$TMP/in"
	[ "$status" -ne 0 ]
	grep -q '"error":"STORAGE_ERROR"' "$TMP/report"
	grep -q 'storage failed: no partition takes writes' "$TMP/broker.log"
	! failing_disk_broken
	# Final: later syncs may succeed, nothing is taken or acknowledged.
	run -1 --separate-stderr klog-produce -t f -a all --retry-for 1s \
		<<<"after"
	[[ "$stderr" == *STORAGE_ERROR* ]]
	# And so on the Kafka listener, with librdkafka not retrying.
	run -0 --separate-stderr "$PY" - "$KAFKA" <<-'EOF2'
	import sys
	from confluent_kafka import Producer
	p = Producer({"bootstrap.servers": sys.argv[1], "acks": "all",
	              "retries": 0, "message.timeout.ms": 20000})
	got = []
	p.produce("f", b"kafka after", partition=0,
	          on_delivery=lambda e, m: got.append(e))
	p.flush(30)
	print(got[0].name() if got[0] else "delivered")
	EOF2
	[ "$output" = KAFKA_STORAGE_ERROR ]
	[ "$(scrape "$mport" klog_offline_log_directories)" = 1 ]
	[ "$(scrape "$mport" klog_flush_failures_total)" -ge 1 ]
	kill -TERM "$BROKER_PID"
	st=0
	wait "$BROKER_PID" || st=$?
	[ "$st" -eq 74 ]
	! grep -q 'clean shutdown' "$TMP/broker.log"
	[ ! -e "$BROKER_DATA/.klog_cleanshutdown" ]
	# What a reboot finds.
	failing_disk_heal
	failing_disk_remount
	klog-dump -J "$BROKER_DATA/f-0" >"$TMP/dump" 2>"$TMP/dump.err" || :
	acked=$(check_acked "$TMP/report" "$TMP/dump")
	echo "# $acked records acknowledged, all on the disk" >&3
	[ "$acked" -gt 1000 ]
	# The restart recovers, keeps what it cut, and takes writes again.
	start_broker --segment-bytes 1M
	grep -q 'no clean-shutdown marker' "$TMP/broker.log"
	grep -q 'recovery truncated .*salvage' "$TMP/broker.log"
	grep 'recovery truncated' "$TMP/broker.log" | sed 's/^/# /' >&3
	# Nothing the disk lost is left inside the log, in any segment.
	klog-dump --verify "$BROKER_DATA/f-0"
	klog-produce -t f -a all <<<"again"
	klog-consume -t f -e -o beginning -f '%o\t%s\n' >"$TMP/consumed"
	tail -n 1 "$TMP/consumed" | grep -q $'\tagain$'
}

@test "failing disk: a leader's partitions move to an in-sync follower; no acknowledged record lost" {
	local t=fd p q st
	failing_disk_setup 50
	start_zk
	ZKC=$ZK/fd
	# Broker 1's data is on the failing disk.
	ln -s "$FD_MNT" "$TMP/broker-1"
	rep_cluster
	# Three partitions over three brokers: each leads one.
	rep_create "$t" 3
	for q in 0 1 2; do
		[ "$(rep_leader "$t" "$q")" != 1 ] || p=$q
	done
	[ -n "${p:-}" ]
	failing_disk_sync
	rep_produce_start "$t" 3 200
	rep_consume_start "$t"
	rep_wait_progress "$p" 100
	# The tmpfs full: broker 1's next write-back fails.
	head -c 64M /dev/zero >"$FD_TMPFS/filler" 2>/dev/null || :
	rep_wait_new_leader "$t" "$p" 1
	grep -q 'storage failed' "$TMP/broker-1.log"
	grep -q 'gave up the lead (storage failed)' "$TMP/broker-1.log"
	# Writes go on on the new leader; broker 1 leaves every ISR.
	rep_wait_progress "$p" 100
	for q in 0 1 2; do
		rep_wait "$REP_WAIT" rep_isr_is "$t" "$q" 2,3
	done
	# Broker 1 stops (no marker), its disk is repaired, it comes back.
	kill -TERM "${BROKER_PIDS[1]}"
	st=0
	wait "${BROKER_PIDS[1]}" || st=$?
	[ "$st" -eq 74 ]
	rm -f "$FD_TMPFS/filler"
	failing_disk_heal
	failing_disk_remount
	rep_restart 1
	rep_check "$t"
}
