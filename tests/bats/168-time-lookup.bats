#!/usr/bin/env bats
# Time lookups (issue 30): records a Kafka client stamps are found by
# time, the first at or after it in log order (records are not sorted by
# time): by klog-consume -o s@T and klog-group's offsets (OFFSETS v2), and
# by Kafka's ListOffsets through confluent-kafka's and kafka-python's
# offsets_for_times; a partition of plain lines keeps the segments' answer.

bats_require_minimum_version 1.5.0
load helpers
load kafka

setup() {
	common_setup
	unset KLOG_BROKERS KLOG_ZOOKEEPER KLOG_DATA_DIR
}

teardown() {
	common_teardown
}

# Timestamps of the records produced below, in order: a second apart from
# T0, with record 10 late (T0 + 25 s) and record 11 early (T0 + 2 s).
T0=1700000000000

@test "time: a record a batch: klog-consume -o s@T starts at the first record at or after T, confluent-kafka and kafka-python agree" {
	start_kafka_broker
	run -0 "$PY" - "$KAFKA" "$T0" <<-'EOF'
	import sys
	from confluent_kafka import Producer
	p = Producer({"bootstrap.servers": sys.argv[1], "linger.ms": 0})
	t0 = int(sys.argv[2])
	for i in range(30):
	    ts = t0 + {10: 25000, 11: 2000}.get(i, i * 1000)
	    p.produce("ts", value=b"r%d" % i, partition=0, timestamp=ts)
	    p.flush(10)       # one batch each: one entry each
	EOF
	# T0 + 9.5 s: record 10 (25 s) is the first at or after it.
	run -0 klog-consume -t ts -o "s@$((T0 + 9500))" -e
	[ "${lines[0]}" = r10 ]
	[ "${#lines[@]}" -eq 20 ]
	# T0 + 12 s: record 10 again (the running max is what counts).
	run -0 klog-consume -t ts -o "s@$((T0 + 12000))" -c 1
	[ "$output" = r10 ]
	# T0 + 26 s: record 26, after the late one.
	run -0 klog-consume -t ts -o "s@$((T0 + 26000))" -c 1
	[ "$output" = r26 ]
	# Past every record: nothing, from the end.
	run -0 klog-consume -t ts -o "s@$((T0 + 99000))" -e
	[ -z "$output" ]
	run -0 "$PY" - "$KAFKA" "$T0" <<-'EOF'
	import sys
	from confluent_kafka import Consumer, TopicPartition
	from kafka import KafkaConsumer, TopicPartition as KTP
	t0 = int(sys.argv[2])
	c = Consumer({"bootstrap.servers": sys.argv[1], "group.id": "t"})
	k = KafkaConsumer(bootstrap_servers=sys.argv[1])
	# The records' Kafka offsets and values, read back.
	c.assign([TopicPartition("ts", 0, 0)])
	got = []
	while len(got) < 30:
	    m = c.poll(10)
	    assert m is not None and m.error() is None, m and m.error()
	    got.append((m.offset(), m.timestamp()[1], m.value()))
	for t in (0, t0, t0 + 9500, t0 + 12000, t0 + 26000, t0 + 29000):
	    want = next((o, ts) for o, ts, v in got if ts >= t)
	    r = c.offsets_for_times([TopicPartition("ts", 0, t)], 10)[0]
	    assert (r.error, r.offset) == (None, want[0]), (t, r, want)
	    r = k.offsets_for_times({KTP("ts", 0): t})[KTP("ts", 0)]
	    assert (r.offset, r.timestamp) == want, (t, r, want)
	r = c.offsets_for_times([TopicPartition("ts", 0, t0 + 99000)], 10)[0]
	assert r.offset == -1, r
	assert k.offsets_for_times({KTP("ts", 0): t0 + 99000}) == \
	    {KTP("ts", 0): None}
	c.close()
	k.close()
	EOF
}

@test "time: batches of records out of order: offsets_for_times finds the record inside its batch; after a restart too" {
	start_kafka_broker
	run -0 "$PY" - "$KAFKA" "$T0" <<-'EOF'
	import sys
	from confluent_kafka import Producer
	p = Producer({"bootstrap.servers": sys.argv[1], "linger.ms": 1000,
	              "compression.codec": "lz4"})
	t0 = int(sys.argv[2])
	for b in range(6):
	    for i in range(b * 10, b * 10 + 10):
	        ts = t0 + (i * 1000 if i % 7 else i * 1000 + 15000)
	        p.produce("tb", value=b"r%d" % i, partition=0, timestamp=ts)
	    p.flush(10)       # a batch of ten records
	EOF
	check() {
		"$PY" - "$KAFKA" "$T0" <<-'EOF'
		import sys
		from confluent_kafka import Consumer, TopicPartition
		from kafka import KafkaConsumer, TopicPartition as KTP
		t0 = int(sys.argv[2])
		# A lookup waits behind the consumer's fetch, parked at the end
		# of the log for fetch.wait.max.ms (500 by default), as it would
		# on a Kafka broker: 0.5 s a lookup, 100 s for this test.
		c = Consumer({"bootstrap.servers": sys.argv[1], "group.id": "t",
		              "fetch.wait.max.ms": 10})
		k = KafkaConsumer(bootstrap_servers=sys.argv[1])
		c.assign([TopicPartition("tb", 0, 0)])
		got = []
		while len(got) < 60:
		    m = c.poll(10)
		    assert m is not None and m.error() is None, m and m.error()
		    got.append((m.offset(), m.timestamp()[1]))
		# Offsets go one by one inside an entry: a record whose
		# offset less one is a record's is not its entry's first.
		offs = set(o for o, ts in got)
		inside = 0
		for t in range(t0 - 1000, t0 + 76000, 700):
		    want = next(((o, ts) for o, ts in got if ts >= t), None)
		    r = c.offsets_for_times([TopicPartition("tb", 0, t)], 10)[0]
		    assert r.offset == (want[0] if want else -1), (t, r, want)
		    r = k.offsets_for_times({KTP("tb", 0): t})[KTP("tb", 0)]
		    assert (r and (r.offset, r.timestamp)) == want, (t, r, want)
		    inside += want is not None and want[0] - 1 in offs
		assert inside > 20, inside
		c.close()
		k.close()
		EOF
	}
	run -0 check
	# A restart: the index is built again, by the indexer thread or by
	# a lookup that comes first.
	kill -TERM "$BROKER_PID"
	wait "$BROKER_PID"
	start_kafka_broker
	run -0 check
}

@test "time: klog-produce -J records with timestamps: klog-consume -o s@T and OFFSETS v2 find the first at or after T" {
	start_broker
	# One record a request: one entry each; then ten to one entry.
	for i in $(seq 0 29); do
		case $i in 10) d=25000 ;; 11) d=2000 ;; *) d=$((i * 1000)) ;; esac
		printf '{"payload":"r%d","timestamp":%d}\n' "$i" $((T0 + d))
	done >"$TMP/one"
	klog-produce -t nt -p 0 -J --batch 1 -a all <"$TMP/one"
	run -0 klog-consume -t nt -o "s@$((T0 + 9500))" -e
	[ "${lines[0]}" = r10 ]
	[ "${#lines[@]}" -eq 20 ]
	run -0 klog-consume -t nt -o "s@$((T0 + 26000))" -c 1
	[ "$output" = r26 ]
	run -0 klog-consume -t nt -o "s@$((T0 + 99000))" -e
	[ -z "$output" ]
	# The time a line of -f %T shows is what was stored.
	run -0 klog-consume -t nt -o "s@$((T0 + 26000))" -c 1 -f '%T\n'
	[ "$output" = $((T0 + 26000)) ]
}

@test "time: plain lines keep the segments' answer (klog-consume s@T asks at OFFSETS v2)" {
	start_broker --segment-bytes 1K
	seq 300 | klog-produce -t plain -a all --batch 20
	local segs base
	segs=("$BROKER_DATA"/plain-0/*.klog)
	[ "${#segs[@]}" -ge 4 ]
	# Segment i last written at 2020-01-01 plus i hours.
	for i in "${!segs[@]}"; do
		touch -d "@$((1577836800 + i * 3600))" "${segs[$i]}"
	done
	# Half past the third's hour: the start of segment 2, as Kafka 0.7.
	base=$(basename "${segs[2]}" .klog)
	run -0 klog-consume -t plain -o "s@$(((1577836800 + 7200 + 1800) * 1000))" \
		-c 1 -f '%o\n'
	[ "$output" -eq "$((10#$base))" ]
	# Before every segment: the beginning.
	run -0 klog-consume -t plain -o s@2019-01-01T00:00:00Z -e
	[ "${#lines[@]}" -eq 300 ]
	[ "${lines[0]}" = 1 ]
}

# GET /metrics of the broker's --metrics-listen on $1: the body.
scrape() {
	"$PY" - "$1" <<-'PY'
	import http.client, sys
	c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)
	c.request("GET", "/metrics")
	sys.stdout.write(c.getresponse().read().decode())
	PY
}

@test "time: after a restart the indexer thread reads the old segments, not the first lookup; lookups after are right" {
	local mport unindexed line size segs pad
	mport=$(free_port)
	pad=$(printf '%01000d' 0)
	start_broker --segment-bytes 64K --metrics-listen "127.0.0.1:$mport"
	# 600 records a second apart from T0, an entry each, with record
	# 300 late (T0 + 4000 s): about ten segments.
	for i in $(seq 0 599); do
		d=$((i * 1000))
		[ "$i" -ne 300 ] || d=4000000
		printf '{"payload":"r%d-%s","timestamp":%d}\n' "$i" "$pad" \
			$((T0 + d))
	done | klog-produce -t st -p 0 -J --batch 1 -a all
	unindexed=$(scrape "$mport" | awk '$1 ~ /^klog_time_index_unindexed_bytes\{topic="st"/ { print $2 }')
	[ "$unindexed" = 0 ]      # kept by the appends
	kill -TERM "$BROKER_PID"
	wait "$BROKER_PID"
	: >"$TMP/broker.log"
	start_broker --segment-bytes 64K --metrics-listen "127.0.0.1:$mport"
	# No lookup yet: the indexer reads every segment, whole.
	wait_log "time index:" 10
	line=$(grep -F "time index:" "$TMP/broker.log")
	size=$(cat "$BROKER_DATA"/st-0/*.klog | wc -c)
	segs=$(ls "$BROKER_DATA"/st-0/*.klog | wc -l)
	[ "$segs" -ge 8 ]
	[[ "$line" == *" $segs segments of 1 partition indexed, $size bytes read"* ]]
	unindexed=$(scrape "$mport" | awk '$1 ~ /^klog_time_index_unindexed_bytes\{topic="st"/ { print $2 }')
	[ "$unindexed" = 0 ]
	# The first at or after T, in log order.
	run -0 klog-consume -t st -o "s@$((T0 + 300500))" -c 1
	[ "$output" = "r300-$pad" ]
	run -0 klog-consume -t st -o "s@$((T0 + 1000))" -c 1
	[ "$output" = "r1-$pad" ]
	run -0 klog-consume -t st -o "s@$((T0 + 299000))" -c 1
	[ "$output" = "r299-$pad" ]
	run -0 klog-consume -t st -o "s@$((T0 + 4000000))" -c 1
	[ "$output" = "r300-$pad" ]
	run -0 klog-consume -t st -o "s@$((T0 + 4000001))" -e
	[ -z "$output" ]
}
