#!/usr/bin/env bats
# The Kafka listener with the clients users run: kcat (librdkafka),
# kafka-python and confluent-kafka, against a standalone broker; what a
# Kafka client writes the native tools read, and the reverse.

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

@test "kafka: kcat -L lists the broker and each topic's partitions" {
	start_kafka_broker --topic app:3
	run -0 kc -L
	[[ $output == *"1 brokers:"* ]]
	[[ $output == *"broker 0 at 127.0.0.1:$KAFKA_PORT"* ]]
	[[ $output == *'topic "app" with 3 partitions:'* ]]
	[[ $output == *"partition 2, leader 0, replicas: 0, isrs: 0"* ]]
}

@test "kafka: 100,000 lines through kcat -P come out of kcat -C and klog-consume, in order" {
	start_kafka_broker
	seq 100000 >"$TMP/in"
	kc -P -t app -p 0 <"$TMP/in"
	kc -C -t app -p 0 -o beginning -e >"$TMP/out"
	cmp "$TMP/in" "$TMP/out"
	klog-consume -t app -o beginning -e >"$TMP/native"
	cmp "$TMP/in" "$TMP/native"
}

@test "kafka: what klog-produce writes, kcat reads, and kcat -e ends at the end" {
	start_kafka_broker --topic app:2
	seq 50000 | klog-produce -t app
	# Plain and gzip batches alike.
	seq 50001 60000 | klog-produce -t app -z gzip
	kc -C -t app -o beginning -e -f '%p %s\n' >"$TMP/out"
	[ "$(wc -l <"$TMP/out")" -eq 60000 ]
	cut -d' ' -f2 "$TMP/out" | sort -n | cmp - <(seq 60000)
	# Per partition, in order.
	for p in 0 1; do
		awk -v p=$p '$1 == p { print $2 }' "$TMP/out" >"$TMP/p$p"
		sort -n -c "$TMP/p$p"
	done
}

@test "kafka: kcat -z gzip, snappy and lz4 batches are stored as they came and read back" {
	start_kafka_broker
	declare -A num=([gzip]=1 [snappy]=2 [lz4]=3)
	for codec in gzip snappy lz4; do
		seq 20000 | sed "s/^/$codec /" >"$TMP/$codec"
		kc -P -t "z$codec" -p 0 -z "$codec" <"$TMP/$codec"
		# Kept as the batches came, compressed: librdkafka sends a batch
		# uncompressed when compressing would not shrink it (a short
		# last one, under load), so 2/0 may be there too.
		kinds=$(entry_kinds \
		    "$BROKER_DATA/z$codec-0/00000000000000000000.klog" | sort -u)
		[[ $'\n'$kinds$'\n' == *$'\n'"2/${num[$codec]}"$'\n'* ]]
		[ -z "$(grep -vx -e 2/0 -e "2/${num[$codec]}" <<<"$kinds")" ]
		klog-consume -t "z$codec" -o beginning -e >"$TMP/$codec.out"
		cmp "$TMP/$codec" "$TMP/$codec.out"
		kc -C -t "z$codec" -o beginning -e >"$TMP/$codec.kc"
		cmp "$TMP/$codec" "$TMP/$codec.kc"
	done
}

@test "kafka: a payload damaged on disk is served as stored; kcat -X check.crcs=true finds it, as klog-consume does" {
	start_kafka_broker
	printf 'first\nsecond\nthird\n' | klog-produce -t dmg
	# "second" is the entry at byte 14 (4 + 5 + 5 for "first"); its
	# payload starts 9 bytes in.
	printf 'X' | dd of="$BROKER_DATA/dmg-0/00000000000000000000.klog" \
		bs=1 seek=23 conv=notrunc 2>/dev/null
	# The broker does not check stored CRCs on a fetch (a Kafka broker
	# does not either): the message's Kafka CRC is derived from the
	# stored one, which the damaged payload no longer matches.
	run -1 kc -C -t dmg -p 0 -o beginning -e -X check.crcs=true \
		-f '%o %s\n'
	[[ $output == *"Message at offset 28 "*"failed CRC32 check"* ]]
	[[ $output == *"13 first"* && $output != *Xecond* ]]
	# librdkafka does not check by default, against Kafka either.
	run -0 kc -C -t dmg -p 0 -o beginning -e -f '%o %s\n'
	[ "$output" = "$(printf '13 first\n28 Xecond\n42 third')" ]
	run -65 klog-consume -t dmg -o beginning -e
	[[ $output == "first"*"offset 14: crc mismatch"* ]]
}

@test "kafka: offsets are byte offsets: the next message's start less one" {
	start_kafka_broker
	printf 'a\nbb\nccc\n' | klog-produce -t off
	# Entries of 9 + payload bytes: ends at 10, 21, 33.
	run -0 kc -C -t off -o beginning -e -f '%o %s\n'
	[ "$output" = "$(printf '9 a\n20 bb\n32 ccc')" ]
	# A fetch from any byte serves the message holding it.
	run -0 kc -C -t off -o 15 -e -f '%o %s\n'
	[ "$output" = "$(printf '20 bb\n32 ccc')" ]
	run -0 kc -C -t off -o 10 -e -f '%o %s\n'
	[ "$output" = "$(printf '20 bb\n32 ccc')" ]
	# -o -N counts bytes, not messages (documented): the last 12 bytes
	# are in the last message.
	run -0 kc -C -t off -o -12 -e -f '%s\n'
	[ "$output" = "ccc" ]
	# The high watermark is the end byte: klog-consume -L agrees.
	run -0 klog-consume -L -t off
	[ "$output" = "off	0	0	33" ]
	run -0 kc -Q -t off:0:-1
	[[ $output == *"off [0] offset 33"* ]]
}

@test "kafka: delivery reports: a batch is one entry, its records at its offset + i, as consumers read them" {
	start_kafka_broker --topic dr:1
	"$PY" - "$KAFKA" >"$TMP/dr" <<-'EOF2'
	import sys
	from confluent_kafka import Producer
	p = Producer({"bootstrap.servers": sys.argv[1], "linger.ms": 200})
	got = []
	for v in (b"a", b"bb", b"ccc", b"dddd"):
	    p.produce("dr", v, partition=0, on_delivery=lambda e, m: got.append((e, m.offset(), m.value())))
	p.flush(30)
	assert [e for e, _, _ in got] == [None] * 4, got
	for _, o, v in got:
	    print(o, v.decode())
	EOF2
	# Each batch one magic-2 entry (librdkafka may send one to four), its
	# records at its offset + i: what the delivery reports said is what a
	# consumer reads, from 0.
	run -0 kc -C -t dr -o beginning -e -f '%o %s\n'
	[ "$output" = "$(cat "$TMP/dr")" ]
	[ "${lines[0]}" = "0 a" ]
	[ "${#lines[@]}" -eq 4 ]
	run -0 entry_kinds "$BROKER_DATA/dr-0/00000000000000000000.klog"
	for l in "${lines[@]}"; do [ "$l" = 2/0 ]; done
	# In one batch they are dense: 0 1 2 3.
	[ "${#lines[@]}" -gt 1 ] || [ "$(cut -d' ' -f1 "$TMP/dr" | xargs)" = "0 1 2 3" ]
}

@test "kafka: kafka-python: a group commits, and a new consumer resumes from the commit" {
	start_kafka_broker --topic kp:2
	seq 1000 | klog-produce -t kp
	timeout 30 "$PY" - "$KAFKA" >"$TMP/lag" <<-'EOF2'
	import sys
	from kafka import KafkaConsumer, TopicPartition
	c = KafkaConsumer("kp", bootstrap_servers=sys.argv[1], group_id="g1",
	                  auto_offset_reset="earliest", enable_auto_commit=False,
	                  consumer_timeout_ms=5000)
	n = 0
	for m in c:
	    n += 1
	    if n == 600:
	        break
	c.commit()
	for p in (0, 1):
	    tp = TopicPartition("kp", p)
	    print(p, c.committed(tp), c.end_offsets([tp])[tp])
	c.close()
	EOF2
	# Lag is in bytes (documented): what is left of each partition after
	# its commit, 9 bytes of header and the line, is end - committed.
	while read -r p committed end; do
		bytes=$(klog-consume -t kp -p "$p" -o "$committed" -e |
			awk '{ s += 9 + length($0) } END { print s + 0 }')
		[ "$bytes" -eq $((end - committed)) ]
	done <"$TMP/lag"
	timeout 30 "$PY" - "$KAFKA" >"$TMP/second" <<-'EOF2'
	import sys
	from kafka import KafkaConsumer
	c = KafkaConsumer("kp", bootstrap_servers=sys.argv[1], group_id="g1",
	                  auto_offset_reset="earliest", consumer_timeout_ms=4000)
	for m in c:
	    print(m.value.decode())
	c.close()
	EOF2
	# 400 left, none read twice: the commit was exact.
	[ "$(wc -l <"$TMP/second")" -eq 400 ]
	# The committed offsets survive a restart, and are klog byte offsets.
	kill -TERM "$BROKER_PID"
	wait_gone "$BROKER_PID" 10
	start_kafka_broker
	"$PY" - "$KAFKA" <<-'EOF2'
	import sys
	from kafka import KafkaConsumer, TopicPartition
	c = KafkaConsumer(bootstrap_servers=sys.argv[1], group_id="g1")
	for p in (0, 1):
	    tp = TopicPartition("kp", p)
	    assert c.committed(tp) == c.end_offsets([tp])[tp], (p, c.committed(tp))
	c.close()
	EOF2
}

@test "kafka: two librdkafka members share four partitions; one leaves, the other takes all" {
	start_kafka_broker --topic grp:4
	seq 4000 | klog-produce -t grp
	# Each member stops once it has what it waits for and then a second
	# with no message: the first, two partitions (the second is in); the
	# second, all four after two (the first has left).
	cat >"$TMP/member.py" <<-'EOF2'
	import sys, time
	from confluent_kafka import Consumer
	want = int(sys.argv[2])
	c = Consumer({"bootstrap.servers": sys.argv[1], "group.id": "pair",
	              "auto.offset.reset": "earliest", "session.timeout.ms": 6000,
	              "heartbeat.interval.ms": 500})
	assigned = []
	quiet = [time.time()]
	def on_assign(c, ps):
	    assigned.append(sorted(p.partition for p in ps))
	    quiet[0] = time.time()
	c.subscribe(["grp"], on_assign=on_assign)
	def done():
	    return (assigned and len(assigned[-1]) == want and
	            any(len(a) == 2 for a in assigned) and time.time() - quiet[0] > 1)
	end = time.time() + 30
	n = 0
	while time.time() < end and not done():
	    m = c.poll(0.2)
	    if m is not None and m.error() is None:
	        n += 1
	        quiet[0] = time.time()
	c.close()
	print(n, assigned[-1] if assigned else [])
	for a in assigned:
	    print("assigned", a)
	EOF2
	"$PY" "$TMP/member.py" "$KAFKA" 2 >"$TMP/a" &
	a=$!
	sleep 1
	"$PY" "$TMP/member.py" "$KAFKA" 4 >"$TMP/b" &
	b=$!
	wait "$a"
	wait "$b"
	# While both were in, each had two of the four.
	grep -q 'assigned \[0, 1\]\|assigned \[2, 3\]\|assigned \[0, 2\]\|assigned \[1, 3\]' "$TMP/a"
	# After the first left, the second had all four.
	grep -q 'assigned \[0, 1, 2, 3\]' "$TMP/b"
	tail -n +2 "$TMP/b" | tail -1 | grep -q '\[0, 1, 2, 3\]'
	# Between them, every message at least once.
	[ $(( $(head -1 "$TMP/a" | cut -d' ' -f1) + $(head -1 "$TMP/b" | cut -d' ' -f1) )) -ge 4000 ]
}

@test "kafka: kcat -G: a balanced consumer group reads every message" {
	start_kafka_broker --topic kg:3
	seq 3000 | klog-produce -t kg
	timeout 15 kcat -b "$KAFKA" -q -G readers -o beginning -e kg >"$TMP/out" || true
	sort -n "$TMP/out" | cmp - <(seq 3000)
}

@test "kafka: librdkafka sends RecordBatch v2 (Produce v7) and fetches with v11; a set of the wrong kind for its version is refused" {
	start_kafka_broker
	seq 1 1000 | timeout 60 kcat -b "$KAFKA" -P -t rb -d protocol 2>"$TMP/p.log"
	grep -q 'ProduceRequest (v7' "$TMP/p.log"
	run -0 klog-consume -t rb -o beginning -e
	[ "$output" = "$(seq 1 1000)" ]
	run -0 --separate-stderr kc -C -t rb -o beginning -e -d protocol
	[ "$output" = "$(seq 1 1000)" ]
	[[ $stderr == *"FetchRequest (v11"* ]]
	echo first | klog-produce -t raw
	# Errors by hand: kafka-python's builders, sent at the versions that
	# may not carry them; only the v3 with a plain batch is stored.
	run -0 "$PY" - "$KAFKA_PORT" <<-'EOF2'
	import socket, struct, sys
	from kafka.record.default_records import DefaultRecordBatchBuilder
	from kafka.record.legacy_records import LegacyRecordBatchBuilder
	def batch(values, transactional=False):
	    b = DefaultRecordBatchBuilder(magic=2, compression_type=0,
	        is_transactional=transactional, producer_id=-1 if not transactional else 5,
	        producer_epoch=0, base_sequence=0, batch_size=1 << 20)
	    for i, v in enumerate(values):
	        b.append(i, timestamp=0, key=None, value=v, headers=[])
	    return bytes(b.build())
	def legacy(values):
	    b = LegacyRecordBatchBuilder(magic=1, compression_type=0, batch_size=1 << 20)
	    for i, v in enumerate(values):
	        b.append(i, timestamp=0, key=None, value=v)
	    return bytes(b.build())
	def produce(version, records):
	    body = struct.pack(">hhi", 0, version, 7) + struct.pack(">h", 4) + b"test"
	    if version >= 3:
	        body += struct.pack(">h", -1)
	    body += struct.pack(">hii", 1, 30000, 1) + struct.pack(">h", 3) + b"raw"
	    body += struct.pack(">iii", 1, 0, len(records)) + records
	    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
	    s.sendall(struct.pack(">i", len(body)) + body)
	    size = struct.unpack(">i", s.recv(4, socket.MSG_WAITALL))[0]
	    resp = s.recv(size, socket.MSG_WAITALL)
	    s.close()
	    tl = struct.unpack(">h", resp[8:10])[0]
	    return struct.unpack(">h", resp[10 + tl + 8:10 + tl + 10])[0]
	print(produce(2, batch([b"v2 in produce 2"])),
	      produce(3, legacy([b"v1 in produce 3"])),
	      produce(3, batch([b"transactional"], transactional=True)),
	      produce(3, batch([b"kept", b"too"])))
	EOF2
	[ "$output" = "43 2 43 0" ]
	run -0 klog-consume -t raw -o beginning -e
	[ "$output" = "$(printf 'first\nkept\ntoo')" ]
}

@test "kafka: garbage, absurd sizes, unknown APIs and versions close the connection, logged with the client's software; the broker serves on" {
	start_kafka_broker
	"$PY" - "$KAFKA_PORT" <<-'EOF2'
	import os, socket, struct, sys
	port = int(sys.argv[1])
	def conn():
	    return socket.create_connection(("127.0.0.1", port), timeout=5)
	def closed(s):
	    try:
	        s.settimeout(5)
	        return s.recv(1 << 16) == b"" or s.recv(1 << 16) == b""
	    except ConnectionResetError:
	        return True
	# First (one refusal a second is logged): ApiVersions v3 (flexible:
	# header v2, compact strings) names the client's software; a Fetch at
	# v99 on that connection is closed.
	s = conn()
	body = b"\x0aklog-test" + b"\x049.9" + b"\x00"
	hdr = struct.pack(">hhih", 18, 3, 7, 2) + b"kc" + b"\x00"
	s.sendall(struct.pack(">i", len(hdr) + len(body)) + hdr + body)
	size = struct.unpack(">i", s.recv(4, socket.MSG_WAITALL))[0]
	resp = s.recv(size, socket.MSG_WAITALL)
	corr, err, n = struct.unpack(">ihB", resp[:7])
	assert (corr, err) == (7, 0) and n > 10, resp
	s.sendall(struct.pack(">ihhih", 13, 1, 99, 8, 2) + b"kc\x00")
	assert closed(s)
	# An absurd size.
	s = conn(); s.sendall(struct.pack(">i", 0x7fffffff)); assert closed(s)
	# A negative one.
	s = conn(); s.sendall(struct.pack(">i", -5)); assert closed(s)
	# An unknown API.
	s = conn(); s.sendall(struct.pack(">ihhih", 10, 77, 0, 1, -1)); assert closed(s)
	# A known API at a version not spoken (Produce v9).
	s = conn(); s.sendall(struct.pack(">ihhih", 10, 0, 9, 1, -1)); assert closed(s)
	# A Produce body that does not parse.
	s = conn(); s.sendall(struct.pack(">ihhihhi", 16, 0, 2, 1, -1, 1, 1000) + b"\xff\xff\xff"); assert closed(s)
	# Random bytes.
	for _ in range(20):
	    s = conn(); s.sendall(os.urandom(4096)); s.close()
	EOF2
	wait_log 'Kafka listener: fetch v99 (klog speaks v0-' 5
	grep -F 'from client id "kc" (klog-test 9.9): UNSUPPORTED_VERSION, closed; ' "$TMP/broker.log"
	kill -0 "$BROKER_PID"
	echo still | kc -P -t after
	run -0 kc -C -t after -o beginning -e
	[ "$output" = "still" ]
}

@test "kafka: a message over --max-message-bytes is refused with MESSAGE_TOO_LARGE" {
	start_kafka_broker --max-message-bytes 1000
	head -c 5000 /dev/zero | tr '\0' x >"$TMP/big"
	echo >>"$TMP/big"
	run timeout 30 kcat -b "$KAFKA" -P -t big -X message.max.bytes=100000 "$TMP/big"
	[[ $output == *"too large"* || $output == *"MSG_SIZE_TOO_LARGE"* ]]
	run -0 klog-consume -L -t big
	[ "$output" = "big	0	0	0" ]
}
