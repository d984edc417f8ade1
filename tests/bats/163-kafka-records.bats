#!/usr/bin/env bats
# The Kafka listener keeps what producers send beside the value: keys,
# timestamps (CreateTime, or the broker's LogAppendTime) and headers,
# given back at every fetch version that can carry them; a compressed
# batch stored as it came (klog-kafka(7), MESSAGES).

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

@test "kafka records: kcat -K and -H round trip key, timestamp and headers; klog-consume reads the values" {
	start_kafka_broker --topic kr:1
	before=$(date +%s%3N)
	printf 'k1:v1\nk2:v2\n:v3\n' | kc -P -t kr -p 0 -K: -H h1=x -H h2=yz
	after=$(date +%s%3N)
	run -0 kc -C -t kr -p 0 -o beginning -e -f '%k|%h|%s\n'
	[ "$output" = "$(printf 'k1|h1=x,h2=yz|v1\nk2|h1=x,h2=yz|v2\n|h1=x,h2=yz|v3')" ]
	# CreateTime: the producer's clock, within the produce.
	run -0 kc -C -t kr -p 0 -o beginning -e -f '%T\n'
	for ts in "${lines[@]}"; do
		[ "$ts" -ge "$before" ] && [ "$ts" -le "$after" ]
	done
	# Magic-2 entries (one a batch: kcat may send one or more); the
	# native consumer reads their values.
	run -0 entry_kinds "$BROKER_DATA/kr-0/00000000000000000000.klog"
	for l in "${lines[@]}"; do [ "$l" = 2/0 ]; done
	[ "${#lines[@]}" -ge 1 ]
	run -0 klog-consume -t kr -o beginning -e
	[ "$output" = "$(printf 'v1\nv2\nv3')" ]
}

@test "kafka records: kafka-python and confluent-kafka read each other's keys, timestamps and binary headers" {
	start_kafka_broker --topic py:1
	run -0 "$PY" - "$KAFKA" <<-'EOF2'
	import sys
	import confluent_kafka as ck
	from kafka import KafkaProducer, KafkaConsumer, TopicPartition
	bs = sys.argv[1]
	hk = [("bin", b"\x00\xff\x01"), ("empty", b""), ("bin", b"again")]
	kp = KafkaProducer(bootstrap_servers=bs)
	kp.send("py", key=b"kp-key", value=b"from kafka-python",
	        timestamp_ms=1700000000001, headers=hk, partition=0).get(30)
	kp.close()
	p = ck.Producer({"bootstrap.servers": bs})
	p.produce("py", key=b"\x00ck", value=None, partition=0,
	          timestamp=1700000000002,
	          headers=[("null", None), ("bin", b"\xfe\x00")])
	assert p.flush(30) == 0
	# Read by confluent-kafka (Fetch v11: record batches) ...
	c = ck.Consumer({"bootstrap.servers": bs, "group.id": "g",
	                 "enable.auto.commit": False})
	c.assign([ck.TopicPartition("py", 0, 0)])
	got = []
	while len(got) < 2:
	    m = c.poll(10)
	    assert m is not None and m.error() is None, m and m.error()
	    got.append((m.key(), m.value(), m.timestamp(), m.headers()))
	c.close()
	assert got[0] == (b"kp-key", b"from kafka-python",
	                  (ck.TIMESTAMP_CREATE_TIME, 1700000000001), hk), got[0]
	assert got[1] == (b"\x00ck", None, (ck.TIMESTAMP_CREATE_TIME,
	                  1700000000002), [("null", None), ("bin", b"\xfe\x00")]), got[1]
	# ... and by kafka-python, which has no null header values.
	k = KafkaConsumer(bootstrap_servers=bs, consumer_timeout_ms=5000)
	k.assign([TopicPartition("py", 0)])
	k.seek_to_beginning()
	got = [(m.key, m.value, m.timestamp, m.timestamp_type, m.headers)
	       for m in k]
	assert got[0] == (b"kp-key", b"from kafka-python", 1700000000001, 0,
	                  hk), got[0]
	assert got[1][:4] == (b"\x00ck", None, 1700000000002, 0), got[1]
	assert got[1][4][1] == ("bin", b"\xfe\x00"), got[1]
	assert len(got) == 2
	EOF2
}

@test "kafka records: under LogAppendTime the broker's clock is every record's time, of that type" {
	start_kafka_broker --topic la:1 --log-message-timestamp-type LogAppendTime
	run -0 "$PY" - "$KAFKA" <<-'EOF2'
	import sys, time
	import confluent_kafka as ck
	from kafka import KafkaProducer, KafkaConsumer, TopicPartition
	bs = sys.argv[1]
	before = int(time.time() * 1000)
	p = ck.Producer({"bootstrap.servers": bs})
	dr = []
	for key, value, ts in ((b"a", b"1", 1000), (b"b", b"2", 2000)):
	    p.produce("la", key=key, value=value, partition=0, timestamp=ts,
	              on_delivery=lambda e, m: dr.append((e, m.timestamp())))
	assert p.flush(30) == 0
	kp = KafkaProducer(bootstrap_servers=bs)
	md = kp.send("la", value=b"3", timestamp_ms=3000, partition=0).get(30)
	kp.close()
	after = int(time.time() * 1000)
	# The produce answer tells the time the batch was stamped with.
	for e, (kind, ts) in dr:
	    assert e is None and kind == ck.TIMESTAMP_LOG_APPEND_TIME, dr
	    assert before <= ts <= after, (before, ts, after)
	assert before <= md.timestamp <= after, md
	c = ck.Consumer({"bootstrap.servers": bs, "group.id": "g"})
	c.assign([ck.TopicPartition("la", 0, 0)])
	for want in (b"1", b"2", b"3"):
	    m = c.poll(10)
	    assert m is not None and m.error() is None and m.value() == want
	    kind, ts = m.timestamp()
	    assert kind == ck.TIMESTAMP_LOG_APPEND_TIME, m.timestamp()
	    assert before <= ts <= after, (before, ts, after)
	c.close()
	k = KafkaConsumer(bootstrap_servers=bs, consumer_timeout_ms=5000)
	k.assign([TopicPartition("la", 0)])
	k.seek_to_beginning()
	got = [(m.value, m.timestamp_type, before <= m.timestamp <= after)
	       for m in k]
	assert got == [(b"1", 1, True), (b"2", 1, True), (b"3", 1, True)], got
	EOF2
	run -64 klog-serve --log-message-timestamp-type Sometime -d "$TMP/x"
	[[ $output == *"CreateTime or LogAppendTime"* ]]
}

@test "kafka records: old fetch versions get keys, and from Fetch v2 timestamps" {
	start_kafka_broker --topic old:1
	printf 'k1:v1\nk2:v2\n' | kc -P -t old -p 0 -K: -H h=x
	# Fetch v0-v1 (broker 0.9.0: MessageSet v0): keys, no timestamps;
	# the last record at its entry's last byte.
	run -0 kc -X api.version.request=false \
		-X broker.version.fallback=0.9.0 -C -t old -p 0 -o beginning \
		-e -f '%o %k %s\n'
	[ "${#lines[@]}" -eq 2 ]
	[[ ${lines[0]} =~ ^[0-9]+\ k1\ v1$ ]]
	[[ ${lines[1]} =~ ^[0-9]+\ k2\ v2$ ]]
	end=$(klog-consume -L -t old | cut -f4)
	[ "${lines[1]%% *}" -eq $((end - 1)) ]
	# Fetch v3 (kafka-python at 0.10.1: MessageSet v1): timestamps too.
	run -0 "$PY" - "$KAFKA" <<-'EOF2'
	import sys
	from kafka import KafkaConsumer, KafkaProducer, TopicPartition
	bs = sys.argv[1]
	p = KafkaProducer(bootstrap_servers=bs, api_version=(0, 10, 1))
	p.send("old", key=b"k3", value=b"v3", timestamp_ms=1700000000003,
	       partition=0).get(30)
	p.close()
	k = KafkaConsumer(bootstrap_servers=bs, api_version=(0, 10, 1),
	                  consumer_timeout_ms=5000)
	k.assign([TopicPartition("old", 0)])
	k.seek_to_beginning()
	got = [(m.key, m.value, m.timestamp > 1700000000000) for m in k]
	assert got == [(b"k1", b"v1", True), (b"k2", b"v2", True),
	               (b"k3", b"v3", True)], got
	EOF2
}

@test "kafka records: a gzip producer's access log takes about the disk klog-produce -z gzip's does" {
	start_kafka_broker --topic viakafka:1 --topic vianative:1
	awk 'BEGIN { srand(7); split("GET GET GET POST HEAD", m, " ");
	    split("/ /index.html /api/v1/items /api/v1/items/42 /static/app.js /login /search?q=klog /favicon.ico", u, " ");
	    split("200 200 200 304 404 500 301", st, " ");
	    split("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0 Safari/537.36|Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:120.0) Gecko/20100101 Firefox/120.0|curl/7.88.1", ua, "|");
	    t = 1701950400;
	    for (i = 0; i < 20000; i++) {
	        t += int(rand() * 3);
	        printf "%d.%d.%d.%d - - [%s] \"%s %s HTTP/1.1\" %s %d \"-\" \"%s\"\n",
	            10 + int(rand() * 200), int(rand() * 255), int(rand() * 255),
	            1 + int(rand() * 254),
	            strftime("%d/%b/%Y:%H:%M:%S +0000", t, 1), m[1 + int(rand() * 5)],
	            u[1 + int(rand() * 8)], st[1 + int(rand() * 7)],
	            int(rand() * 50000), ua[1 + int(rand() * 3)] } }' \
		>"$TMP/access.log"
	kc -P -t viakafka -p 0 -z gzip <"$TMP/access.log"
	klog-produce -t vianative -p 0 -z gzip <"$TMP/access.log"
	kafka=$(klog-consume -L -t viakafka | cut -f4)
	native=$(klog-consume -L -t vianative | cut -f4)
	plain=$(wc -c <"$TMP/access.log")
	echo "access log: $plain bytes; kcat -z gzip: $kafka on disk;" \
		"klog-produce -z gzip: $native" >&3
	# Stored compressed (not the lines' size), within a fifth of the
	# native producer's.
	[ "$kafka" -lt $((plain / 4)) ]
	[ "$kafka" -lt $((native * 6 / 5)) ]
	kc -C -t viakafka -o beginning -e | cmp - "$TMP/access.log"
	klog-consume -t viakafka -o beginning -e | cmp - "$TMP/access.log"
}

# kfetch.c: a batch of 16 KiB or more goes out as its stored bytes, sent
# from the segment file; smaller ones, and plain lines, are copied.
@test "kafka records: big batches are sent from the segment file, beside small ones and plain lines, at any offset and fetch size" {
	mport=$(free_port)
	start_kafka_broker --topic big:1 --metrics-listen "127.0.0.1:$mport"
	wait_port "$mport" 5
	awk 'BEGIN { srand(3); for (i = 0; i < 30000; i++) {
	    s = sprintf("rec %05d ", i);
	    for (j = 0; j < 6; j++) s = s sprintf("%08x", int(rand() * 4294967295));
	    print s } }' >"$TMP/recs"
	head -n 20000 "$TMP/recs" >"$TMP/a"
	sed -n '20001,20500p' "$TMP/recs" >"$TMP/b"
	sed -n '20501,20510p' "$TMP/recs" >"$TMP/c"
	tail -n +20511 "$TMP/recs" >"$TMP/d"
	kc -P -t big -p 0 <"$TMP/a"
	klog-produce -t big -p 0 <"$TMP/b"
	# One small batch a line (-X linger.ms=0, one at a time).
	while read -r l; do printf '%s\n' "$l" | kc -P -t big -p 0; done <"$TMP/c"
	kc -P -t big -p 0 -z gzip <"$TMP/d"
	cat "$TMP/a" "$TMP/b" "$TMP/c" "$TMP/d" >"$TMP/want"
	run -0 entry_kinds "$BROKER_DATA/big-0/00000000000000000000.klog"
	printf '%s\n' "${lines[@]}" | sort | uniq -c >&3
	# The first entry is a batch of more than 16 KiB (kcat batches by
	# linger.ms, 5 ms): read at 0 and inside it.
	first=$(od -An -N4 -tu4 --endian=big "$BROKER_DATA/big-0/00000000000000000000.klog" | tr -d ' ')
	[ "$first" -gt 16384 ]
	kc -C -t big -p 0 -o beginning -e | cmp - "$TMP/want"
	run -0 kc -C -t big -p 0 -o 100 -c 3 -f '%o %s\n'
	[ "$output" = "$(sed -n '101,103p' "$TMP/want" | awk '{ print 99 + NR, $0 }')" ]
	# A fetch limit under a batch's size: the batch still goes whole,
	# as Kafka's; and a small fetch.max.bytes for the whole answer.
	kc -C -t big -p 0 -o beginning -e -X fetch.message.max.bytes=4096 \
		-X message.max.bytes=4096 \
		-X fetch.max.bytes=8192 | cmp - "$TMP/want"
	# Most of what kcat read (Fetch v11) came from the file.
	metrics=$(curl -sf "http://127.0.0.1:$mport/metrics")
	file=$(echo "$metrics" | sed -n 's/^klog_kafka_fetch_bytes_total{from="file"} //p')
	memory=$(echo "$metrics" | sed -n 's/^klog_kafka_fetch_bytes_total{from="memory"} //p')
	echo "fetched from the file $file bytes, from memory $memory" >&3
	[ "$file" -gt $((memory * 2)) ]
	# Old fetch versions read the same batches as messages.
	run -0 "$PY" - "$KAFKA" "$TMP/want" <<-'EOF2'
	import sys
	from kafka import KafkaConsumer, TopicPartition
	import confluent_kafka as ck
	want = open(sys.argv[2], "rb").read().splitlines()
	for api in [None, (0, 10, 1)]:
	    kw = {} if api is None else {"api_version": api}
	    k = KafkaConsumer(bootstrap_servers=sys.argv[1],
	                      consumer_timeout_ms=5000, **kw)
	    k.assign([TopicPartition("big", 0)])
	    k.seek_to_beginning()
	    got = [m.value for m in k]
	    k.close()
	    assert got == want, (api, len(got), len(want))
	c = ck.Consumer({"bootstrap.servers": sys.argv[1], "group.id": "g",
	                 "enable.auto.commit": False, "check.crcs": True})
	c.assign([ck.TopicPartition("big", 0, 0)])
	got = []
	while len(got) < len(want):
	    m = c.poll(10)
	    assert m is not None and m.error() is None, m and m.error()
	    got.append(m.value())
	c.close()
	assert got == want
	EOF2
}
