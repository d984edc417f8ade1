#!/usr/bin/env bats
# The Kafka listener's data APIs at Kafka 2.1's versions (Produce 7, Fetch
# 11, ListOffsets 5, Metadata 8) and zstd, with the clients that pick them:
# kcat and confluent-kafka (librdkafka 2.0.2), kafka-python 2.0.2; and the
# new versions' fields and refusals, sent by hand.

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

@test "kafka versions: kcat -z zstd produces at Produce v7 and reads back at Fetch v11; -L at Metadata v4" {
	start_kafka_broker
	seq 20000 | sed 's/^/zstd /' >"$TMP/in"
	kc -P -t zs -p 0 -z zstd -d protocol <"$TMP/in" 2>"$TMP/p.log"
	grep -q 'ProduceRequest (v7' "$TMP/p.log"
	# Stored as kcat's zstd batches: the native tools read them.
	klog-consume -t zs -o beginning -e >"$TMP/native"
	cmp "$TMP/in" "$TMP/native"
	kc -C -t zs -o beginning -e -d protocol >"$TMP/out" 2>"$TMP/c.log"
	cmp "$TMP/in" "$TMP/out"
	grep -q 'FetchRequest (v11' "$TMP/c.log"
	grep -q 'ListOffsetsRequest (v2' "$TMP/c.log"
	run -0 --separate-stderr kc -L -d protocol
	[[ $stderr == *"MetadataRequest (v4"* ]]
	[[ $output == *"broker 0 at 127.0.0.1:$KAFKA_PORT"* ]]
	[[ $output == *'topic "zs" with 1 partitions:'* ]]
	# A consumer asks with allow_auto_topic_creation false (librdkafka's
	# allow.auto.create.topics for consumers): nothing is created.
	run kc -C -t never -o beginning -e
	run -0 kc -L
	[[ $output != *'"never"'* ]]
}

@test "kafka versions: by hand: zstd refused before Produce v7 and in MessageSets, log start, sessions, auto-creation, authorized operations" {
	start_kafka_broker
	run -0 "$PY" - "$KAFKA_PORT" "$BATS_TEST_DIRNAME" <<-'EOF2'
	import struct, sys
	sys.path.insert(0, sys.argv[2])
	from kraw import *
	port = int(sys.argv[1])
	# zstd: Produce v3 to v6 and MessageSets may not carry it (76);
	# Produce v7 may, and the records are stored.
	assert produce(port, 3, "z", batch([b"a" * 100], True))[0] == 76
	assert produce(port, 6, "z", batch([b"a" * 100], True))[0] == 76
	assert produce(port, 2, "z", legacy_zstd([b"b" * 100]))[0] == 76
	# A batch is one entry, kept compressed: 10 bytes of header and its
	# body (all but its first 21 bytes); its first record's Kafka offset
	# is the entry's.  Produce v5 and later answer the log start.
	z = batch([b"one", b"two"] * 50, True)
	assert produce(port, 7, "z", z) == (0, 0, 0)
	three = batch([b"three"])
	first = len(z) - 21 + 10
	end = first + len(three) - 21 + 10
	assert produce(port, 5, "z", three) == (0, first, 0)
	# Fetch v11 from the start: no session (0), the partition's high
	# watermark, last stable offset, log start and preferred read
	# replica (-1), then the record batches as stored.
	r = fetch11(port, "z", 0)
	assert struct.unpack(">ihii", r[:14]) == (0, 0, 0, 1), r[:14]
	p = 14 + 2 + 1
	np, part, err, hwm, lso, start, aborted, preferred, size = \
	    struct.unpack(">iihqqqiii", r[p:p + 46])
	assert (np, part, err, hwm, lso, start, aborted, preferred) == \
	    (1, 0, 0, end, end, 0, 0, -1), r[p:p + 46]
	assert size == len(r) - p - 46 and size > 0
	b = r[p + 46:]
	assert struct.unpack(">qib", b[:8] + b[8:12] + b[16:17]) == \
	    (0, first - 4 + 3, 2)
	assert b[21:23] == z[21:23] and b[27:len(z)] == z[27:]
	# An incremental session (epoch 1): the listener keeps none.
	assert fetch11(port, "z", 0, 1) == struct.pack(">ihii", 0, 70, 0, 0)
	# Metadata v4 and later: allow_auto_topic_creation false creates
	# nothing; true (and v1-v3, which have no such field) creates.
	assert metadata(port, 7, ["nope"], allow=False) == ([(3, 0, None)], None)
	assert metadata(port, 7, ["nope"], allow=False) == ([(3, 0, None)], None)
	assert metadata(port, 7, ["yes"]) == ([(0, 1, None)], None)
	# v8: authorized operations when asked (no ACLs: all of Kafka's for
	# a topic, 0xdf8, and for the cluster, 0x1fa0), else -2147483648.
	assert metadata(port, 8, ["yes"], cluster_ops=True, topic_ops=True) == \
	    ([(0, 1, 0xdf8)], 0x1fa0)
	assert metadata(port, 8, ["yes"]) == ([(0, 1, NO_OPS)], NO_OPS)
	EOF2
	run -0 klog-consume -t z -o beginning -e
	[ "$(printf '%s\n' "$output" | head -n 2)" = "$(printf 'one\ntwo')" ]
	[ "$(printf '%s\n' "$output" | wc -l)" -eq 101 ]
	[ "$(printf '%s\n' "$output" | tail -n 1)" = "three" ]
}

@test "kafka versions: Metadata v8's authorized operations are the principal's by the ACLs" {
	ACLS=$TMP/acls
	klog-group --acls "$ACLS" acls add --allow-principal User:ANONYMOUS \
		--operation read --operation describeconfigs --topic reads \
		>/dev/null
	klog-group --acls "$ACLS" acls add --allow-principal User:ANONYMOUS \
		--operation all --topic owns >/dev/null
	klog-group --acls "$ACLS" acls add --allow-principal User:ANONYMOUS \
		--operation describe --operation create --cluster >/dev/null
	start_kafka_broker --acls "$ACLS" --topic reads:1 --topic owns:1 \
		--topic hidden:1
	run -0 "$PY" - "$KAFKA_PORT" "$BATS_TEST_DIRNAME" <<-'EOF2'
	import sys
	sys.path.insert(0, sys.argv[2])
	from kraw import *
	topics, cluster = metadata(int(sys.argv[1]), 8, ["reads", "owns", "hidden"],
	                           cluster_ops=True, topic_ops=True)
	# READ (3), the DESCRIBE (8) it implies and DESCRIBE_CONFIGS (10);
	# ALL: every topic operation; none on a topic it may not describe
	# (29), whose operations Kafka leaves unset; on the cluster CREATE
	# (5) and DESCRIBE (8).
	assert topics == [(0, 1, 0x508), (0, 1, 0xdf8), (29, 0, NO_OPS)], topics
	assert cluster == 0x120, hex(cluster)
	EOF2
}

@test "kafka versions: confluent-kafka produces zstd at Produce v7 and consumes at Fetch v11" {
	start_kafka_broker --topic cz:1
	run -0 --separate-stderr "$PY" - "$KAFKA" <<-'EOF2'
	import sys
	from confluent_kafka import Consumer, Producer, TopicPartition, OFFSET_BEGINNING
	p = Producer({"bootstrap.servers": sys.argv[1], "compression.codec": "zstd",
	              "debug": "protocol", "linger.ms": 50})
	for i in range(5000):
	    p.produce("cz", b"confluent %d" % i, partition=0)
	assert p.flush(30) == 0
	c = Consumer({"bootstrap.servers": sys.argv[1], "group.id": "unused",
	              "enable.auto.commit": False, "debug": "protocol"})
	c.assign([TopicPartition("cz", 0, OFFSET_BEGINNING)])
	got = []
	while len(got) < 5000:
	    m = c.poll(10)
	    assert m is not None and m.error() is None, m and m.error()
	    got.append(m.value())
	c.close()
	assert got == [b"confluent %d" % i for i in range(5000)]
	print("ok")
	EOF2
	[ "$output" = "ok" ]
	[[ $stderr == *"ProduceRequest (v7"* ]]
	[[ $stderr == *"FetchRequest (v11"* ]]
	run -0 klog-consume -t cz -o beginning -e -c 1
	[ "$output" = "confluent 0" ]
}

@test "kafka versions: kafka-python infers broker 2.3.0, produces record batches at Produce v7 and reads at Fetch v4" {
	start_kafka_broker --topic kp7:1
	run -0 --separate-stderr "$PY" - "$KAFKA" <<-'EOF2'
	import logging, sys
	from kafka import KafkaConsumer, KafkaProducer, TopicPartition
	logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)
	p = KafkaProducer(bootstrap_servers=sys.argv[1], compression_type="gzip")
	print(p.config["api_version"])
	for i in range(300):
	    p.send("kp7", b"kafka-python %d" % i, partition=0)
	p.flush(30)
	p.close()
	c = KafkaConsumer(bootstrap_servers=sys.argv[1], consumer_timeout_ms=3000)
	tp = TopicPartition("kp7", 0)
	c.assign([tp])
	c.seek_to_beginning(tp)
	got = [m.value for m in c]
	c.close()
	assert got == [b"kafka-python %d" % i for i in range(300)], len(got)
	print("ok")
	EOF2
	[ "$output" = "$(printf '(2, 3, 0)\nok')" ]
	[[ $stderr == *"ProduceRequest_v7"* ]]
	[[ $stderr == *"FetchRequest_v4"* ]]
	run -0 klog-consume -t kp7 -o beginning -e
	[ "$(printf '%s\n' "$output" | wc -l)" -eq 300 ]
}
