#!/usr/bin/env bats
# The Kafka listener's admin APIs (klog-kafka(7), ADMIN): confluent-kafka's
# AdminClient and kafka-python's KafkaAdminClient create, grow, delete and
# describe topics, each result checked in the data directory or by
# klog-group; Kafka's refusals (an existing topic, bad names, a
# replication factor, configs klog cannot give a topic, partitions never
# fewer, the broker's ACLs); a transactional producer refused;
# hostile requests; and one cluster, where the same requests go to
# ZooKeeper as klog-group -Z's.

bats_require_minimum_version 1.5.0
load helpers
load kafka

setup() {
	common_setup
	unset KLOG_BROKERS KLOG_ZOOKEEPER KLOG_DATA_DIR
	# ck CODE: CODE run with confluent-kafka's AdminClient `a` on the
	# listener and show(futures) printing each "NAME ok", or "NAME
	# ERROR message", sorted.
	cat >"$TMP/ck.py" <<-'EOF'
	import sys
	from confluent_kafka.admin import (AdminClient, NewTopic,
	    NewPartitions, ConfigResource)
	a = AdminClient({'bootstrap.servers': sys.argv[1]})
	def show(fs):
	    for name, f in sorted(fs.items(), key=lambda x: str(x[0])):
	        try:
	            f.result()
	            print(name, 'ok')
	        except Exception as e:
	            print(name, e.args[0].name(), e.args[0].str())
	EOF
}

teardown() {
	common_teardown
}

ck() {
	timeout 60 "$PY" - "$KAFKA" <<<"$(cat "$TMP/ck.py"; printf '%s\n' "$1")"
}

# parts TOPIC: its partition directories, counted.
parts() {
	find "$BROKER_DATA" -maxdepth 1 -name "$1-*" | wc -l
}

@test "kafka admin: CreateTopics by confluent-kafka: created, validated only, and Kafka's refusals" {
	start_kafka_broker --segment-bytes 1M
	run -0 ck "show(a.create_topics([NewTopic('orders', 3, 1),
	    NewTopic('logs', 1, 1, config={'segment.bytes': '1048576',
	        'cleanup.policy': 'delete'}),
	    NewTopic('dry', 2, 1)], validate_only=False))
show(a.create_topics([NewTopic('checked', 2, 1)], validate_only=True))"
	[ "${lines[0]}" = 'dry ok' ]
	[ "${lines[1]}" = 'logs ok' ]
	[ "${lines[2]}" = 'orders ok' ]
	[ "${lines[3]}" = 'checked ok' ]
	[ "$(parts orders)" -eq 3 ]
	[ "$(parts logs)" -eq 1 ]
	[ "$(parts checked)" -eq 0 ]
	run -0 ck "show(a.create_topics([NewTopic('orders', 3, 1),
	    NewTopic('bad name', 1, 1), NewTopic('..', 1, 1),
	    NewTopic('x' * 250, 1, 1), NewTopic('wide', 1, 2),
	    NewTopic('none', 0, 1), NewTopic('huge', 5000, 1),
	    NewTopic('kept', 1, 1, config={'retention.ms': '1000'}),
	    NewTopic('odd', 1, 1, config={'flush.messages': '1'}),
	    NewTopic('comp', 1, 1, config={'cleanup.policy': 'compact'})]))
show(a.create_topics([NewTopic('orders', 3, 1)], validate_only=True))"
	[ "${lines[0]}" = '.. TOPIC_EXCEPTION topic "..": not a valid name' ]
	[ "${lines[1]}" = 'bad name TOPIC_EXCEPTION topic "bad name": byte 0x20 not allowed (only A-Z a-z 0-9 . _ -)' ]
	[ "${lines[2]}" = 'comp POLICY_VIOLATION klog deletes old segments and never compacts: cleanup.policy is delete' ]
	[ "${lines[3]}" = 'huge INVALID_PARTITIONS topic "huge": 5000 partitions: not in [1, 1024]' ]
	[ "${lines[4]}" = 'kept POLICY_VIOLATION klog sets retention.ms for the whole broker, not per topic: klog-serve --retention-hours, now 604800000' ]
	[ "${lines[5]}" = 'none INVALID_PARTITIONS Number of partitions must be larger than 0, or -1 to use the default value.' ]
	[ "${lines[6]}" = 'odd INVALID_CONFIG Unknown topic config name: flush.messages' ]
	[ "${lines[7]}" = 'orders TOPIC_ALREADY_EXISTS topic "orders" exists' ]
	[ "${lines[8]}" = 'wide INVALID_REPLICATION_FACTOR Replication factor: 2 larger than available brokers: 1.' ]
	[[ ${lines[9]} == 'xxxxx'*'x TOPIC_EXCEPTION a topic name is at most 249 bytes, without NUL' ]]
	[ "${lines[10]}" = 'orders TOPIC_ALREADY_EXISTS topic "orders" exists' ]
	[ "$(parts orders)" -eq 3 ]
	[ "$(ls "$BROKER_DATA" | sort | tr '\n' ' ')" = \
		'dry-0 dry-1 logs-0 orders-0 orders-1 orders-2 ' ]
}

@test "kafka admin: CreatePartitions and DeleteTopics by confluent-kafka, as klog-group -b alter-topic and delete-topic" {
	start_kafka_broker --topic orders:2 --topic gone:2
	run -0 ck "show(a.create_partitions([NewPartitions('orders', 3)],
	    validate_only=True))
show(a.create_partitions([NewPartitions('orders', 5),
    NewPartitions('gone', 1), NewPartitions('nosuch', 4)]))"
	[ "${lines[0]}" = 'orders ok' ]
	[ "${lines[1]}" = 'gone INVALID_PARTITIONS Topic currently has 2 partitions, which is higher than the requested 1.' ]
	[ "${lines[2]}" = "nosuch UNKNOWN_TOPIC_OR_PART The topic 'nosuch' does not exist." ]
	[ "${lines[3]}" = 'orders ok' ]
	[ "$(parts orders)" -eq 5 ]
	# What klog-group sees of it: grown, never shrunk.
	run -1 klog-group -b "$KLOG_BROKERS" alter-topic -t orders --partitions 4
	[[ $output == *'has 5 partitions: partitions are added, never removed'* ]]
	echo x | klog-produce -t gone -p 1
	run -0 ck "show(a.delete_topics(['gone', 'nosuch']))"
	[ "${lines[0]}" = 'gone ok' ]
	[ "${lines[1]}" = 'nosuch UNKNOWN_TOPIC_OR_PART Broker: Unknown topic or partition' ]
	[ "$(parts gone)" -eq 0 ]
	run -1 klog-group -b "$KLOG_BROKERS" delete-topic -t gone
	[[ $output == *'topic "gone": no such topic'* ]]
	grep -q 'deleted topic "gone" (2 partitions)' "$TMP/broker.log"
}

@test "kafka admin: DescribeConfigs shows the broker's settings under Kafka's names; unknown topics and other brokers refused" {
	start_kafka_broker --topic orders:3 --segment-bytes 1M \
		--retention-hours 2h --retention-bytes 10M --broker-id 7
	run -0 ck "
fs = a.describe_configs([ConfigResource('topic', 'orders'),
    ConfigResource('broker', '7'), ConfigResource('topic', 'nosuch'),
    ConfigResource('topic', 'a/b')])
for r, f in sorted(fs.items(), key=lambda x: str(x[0])):
    try:
        for k, v in sorted(f.result().items()):
            print(r.name, k, v.value, v.source, v.is_read_only)
    except Exception as e:
        print(r.name, e.args[0].name(), e.args[0].str())"
	[[ $output == *'7 log.segment.bytes 1048576 4 True'* ]]
	[[ $output == *'7 log.retention.ms 7200000 4 True'* ]]
	[[ $output == *'7 broker.id 7 4 True'* ]]
	[[ $output == *'orders num.partitions 3 1 True'* ]]
	[[ $output == *'orders segment.bytes 1048576 4 True'* ]]
	[[ $output == *'orders retention.ms 7200000 4 True'* ]]
	[[ $output == *'orders retention.bytes 10485760 4 True'* ]]
	[[ $output == *'orders cleanup.policy delete 5 True'* ]]
	[[ $output == *"nosuch UNKNOWN_TOPIC_OR_PART The topic 'nosuch' does not exist."* ]]
	[[ $output == *'a/b TOPIC_EXCEPTION topic "a/b": byte 0x2f not allowed (only A-Z a-z 0-9 . _ -)'* ]]
	# The synonyms (v1), and a broker other than this one (Kafka's
	# InvalidRequest), asked in kafka-python's raw requests.
	run -0 timeout 30 "$PY" - "$KAFKA" <<-'EOF'
	import sys
	from kafka import KafkaAdminClient
	from kafka.protocol.admin import DescribeConfigsRequest_v1
	a = KafkaAdminClient(bootstrap_servers=sys.argv[1])
	f = a._send_request_to_node(a._client.least_loaded_node(),
	    DescribeConfigsRequest_v1(resources=[(2, 'orders',
	    ['retention.bytes']), (4, '3', None)], include_synonyms=True))
	a._wait_for_futures([f])
	print(f.value)
	EOF
	# (kafka-python's v1 schema calls config_source is_default.)
	[[ $output == *"(config_names='retention.bytes', config_value='10485760', read_only=True, is_default=True, is_sensitive=False, config_synonyms=[(config_name='log.retention.bytes', config_value='10485760', config_source=4)])]"* ]]
	[[ $output == *"(error_code=42, error_message='Unexpected broker id, expected 7 or empty string, but received 3', resource_type=4, resource_name='3', config_entries=[])"* ]]
}

@test "kafka admin: kafka-python's KafkaAdminClient creates, describes and deletes" {
	start_kafka_broker --retention-bytes 1G
	run -0 timeout 60 "$PY" - "$KAFKA" <<-'EOF'
	import sys
	from kafka.admin import (KafkaAdminClient, NewTopic,
	    ConfigResource, ConfigResourceType)
	from kafka.errors import TopicAlreadyExistsError
	a = KafkaAdminClient(bootstrap_servers=sys.argv[1])
	print(a.create_topics([NewTopic('kp', 2, 1,
	    topic_configs={'retention.bytes': '1073741824'})]))
	print(a.create_topics([NewTopic('kp2', 4, 1)], validate_only=True))
	try:
	    a.create_topics([NewTopic('kp', 2, 1)])
	except TopicAlreadyExistsError as e:
	    print('exists')
	r = a.describe_configs([ConfigResource(ConfigResourceType.TOPIC, 'kp',
	    {'retention.bytes': None})])
	print(r[0].resources[0][4])
	print(a.delete_topics(['kp']))
	EOF
	[ "${lines[0]}" = "CreateTopicsResponse_v3(throttle_time_ms=0, topic_errors=[(topic='kp', error_code=0, error_message=None)])" ]
	[ "${lines[1]}" = "CreateTopicsResponse_v3(throttle_time_ms=0, topic_errors=[(topic='kp2', error_code=0, error_message=None)])" ]
	[ "${lines[2]}" = exists ]
	[ "${lines[3]}" = "[('retention.bytes', '1073741824', True, 4, False, [])]" ]
	[ "${lines[4]}" = "DeleteTopicsResponse_v3(throttle_time_ms=0, topic_error_codes=[(topic='kp', error_code=0)])" ]
	[ "$(parts kp)" -eq 0 ]
	[ "$(parts kp2)" -eq 0 ]
	grep -q 'created topic "kp" with 2 partitions' "$TMP/broker.log"
}

@test "kafka admin: the broker's ACLs: Create, Delete, Alter and DescribeConfigs as Kafka asks them" {
	local acls=$TMP/acls
	klog-group --acls "$acls" acls add --allow-principal User:ANONYMOUS \
		--operation Describe --operation Alter -t orders >/dev/null
	klog-group --acls "$acls" acls add --allow-principal User:ANONYMOUS \
		--operation Create --operation DescribeConfigs -t app- \
		--prefixed >/dev/null
	start_kafka_broker --acls "$acls" --topic orders:1
	run -0 ck "show(a.create_topics([NewTopic('app-1', 1, 1),
    NewTopic('other', 1, 1)]))
show(a.delete_topics(['orders']))
show(a.create_partitions([NewPartitions('orders', 2),
    NewPartitions('app-1', 2)]))
show(a.describe_configs([ConfigResource('topic', 'orders'),
    ConfigResource('topic', 'app-1'), ConfigResource('broker', '0')]))"
	[ "${lines[0]}" = 'app-1 ok' ]
	[ "${lines[1]}" = 'other TOPIC_AUTHORIZATION_FAILED Authorization failed.' ]
	[ "${lines[2]}" = 'orders TOPIC_AUTHORIZATION_FAILED Broker: Topic authorization failed' ]
	[ "${lines[3]}" = 'app-1 TOPIC_AUTHORIZATION_FAILED Authorization failed.' ]
	[ "${lines[4]}" = 'orders ok' ]
	[ "${lines[5]}" = 'ConfigResource(Type.BROKER,0) CLUSTER_AUTHORIZATION_FAILED Authorization failed.' ]
	[ "${lines[6]}" = 'ConfigResource(Type.TOPIC,app-1) ok' ]
	[ "${lines[7]}" = 'ConfigResource(Type.TOPIC,orders) TOPIC_AUTHORIZATION_FAILED Authorization failed.' ]
	[ "$(parts app-1)" -eq 1 ]
	[ "$(parts orders)" -eq 2 ]
	[ "$(parts other)" -eq 0 ]
}

@test "kafka admin: InitProducerId: a transactional id gets Kafka's refusal, an idempotent producer its id (bats 165 has the rest)" {
	start_kafka_broker
	# Raw requests: v1 with a transactional id (classic), v4 without one
	# (flexible, as librdkafka 2.0.2 sends it).
	run -0 timeout 30 "$PY" - "$KAFKA_PORT" <<-'EOF'
	import socket, struct, sys
	s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))
	def ask(version, body, flexible):
	    head = struct.pack('>hhih', 22, version, 5, 2) + b'kc'
	    if flexible:
	        head += b'\0'
	    req = head + body
	    s.sendall(struct.pack('>i', len(req)) + req)
	    size = struct.unpack('>i', s.recv(4))[0]
	    data = b''
	    while len(data) < size:
	        data += s.recv(size - len(data))
	    print(version, data.hex())
	ask(1, struct.pack('>h', 3) + b'txn' + struct.pack('>i', 60000), False)
	ask(4, b'\0' + struct.pack('>iqh', -1, -1, -1) + b'\0', True)
	EOF
	# correlation 5, throttle 0, error 53, producer id -1, epoch -1
	[ "${lines[0]}" = '1 00000005000000000035ffffffffffffffffffff' ]
	# correlation 5, header tags, throttle 0, error 0, id 0, epoch 0, tags
	[ "${lines[1]}" = '4 00000005000000000000000000000000000000000000' ]
	grep -q 'InitProducerId from client id "kc": refused (TRANSACTIONAL_ID_AUTHORIZATION_FAILED): klog has no transactions; the client sets no transactional.id' "$TMP/broker.log"
}

@test "kafka admin: admin requests that do not parse, or name over 10000 topics, close the connection; the broker serves on" {
	start_kafka_broker
	run -0 timeout 30 "$PY" - "$KAFKA_PORT" <<-'EOF'
	import socket, struct, sys
	port = int(sys.argv[1])
	def ask(api, version, body):
	    s = socket.create_connection(('127.0.0.1', port), timeout=5)
	    req = struct.pack('>hhih', api, version, 5, 2) + b'kc' + body
	    s.sendall(struct.pack('>i', len(req)) + req)
	    got = s.recv(4)
	    print(api, 'closed' if got == b'' else 'answered')
	def topics(n):
	    return struct.pack('>i', n) + b''.join(b'\0\6' + b'a%05d' % i +
	        struct.pack('>ihii', 1, 1, 0, 0) for i in range(n))
	# Validate-only (v1): checked, nothing made.
	ask(19, 1, topics(10001) + b'\0\0\0\1\1')
	ask(19, 1, topics(10000) + b'\0\0\0\1\1')
	ask(32, 1, struct.pack('>i', 0x7fffffff) + b'\2\0\1a')
	ask(20, 1, struct.pack('>i', 1) + b'\xff\xff' + b'\0\0\0\1')
	ask(37, 0, struct.pack('>i', 1) + b'\0\1a' + struct.pack('>i', 2))
	ask(22, 4, b'\0')
	EOF
	[ "$output" = "$(printf '19 closed\n19 answered\n32 closed\n20 closed\n37 closed\n22 closed')" ]
	wait_log 'a CreateTopics request of over 10000 topics (api 19 version 1)' 5
	[ -z "$(ls "$BROKER_DATA")" ]
	run -0 kc -L
}

@test "kafka admin: in a cluster, the same requests are klog-group -Z's: replicated topics in ZooKeeper" {
	start_zk
	ZKC="$ZK/kadmin"
	local k1 k2
	k1=$(free_port)
	k2=$(free_port)
	start_zk_broker 1 --kafka-listen "127.0.0.1:$k1"
	start_zk_broker 2 --kafka-listen "127.0.0.1:$k2"
	KAFKA="127.0.0.1:$k1"
	run -0 ck "show(a.create_topics([NewTopic('rt', 2, 2,
    config={'min.insync.replicas': '2'}), NewTopic('wide', 1, 3),
    NewTopic('one', 1, 1)]))
show(a.create_topics([NewTopic('checked', 1, 2), NewTopic('one', 1, 1)],
    validate_only=True))
show(a.create_partitions([NewPartitions('rt', 3)]))"
	[ "${lines[0]}" = 'one ok' ]
	[ "${lines[1]}" = 'rt ok' ]
	[ "${lines[2]}" = 'wide INVALID_REPLICATION_FACTOR Replication factor: 3 larger than available brokers: 2.' ]
	[ "${lines[3]}" = 'checked ok' ]
	[ "${lines[4]}" = 'one TOPIC_ALREADY_EXISTS topic "one" exists (/klog/topics/one)' ]
	[ "${lines[5]}" = 'rt ok' ]
	run -0 klog-group -Z "$ZKC" -H -J topics -t rt
	[ "$(jq -s 'length' <<<"$output")" -eq 3 ]
	[ "$(jq -s '[.[] | .replicas | length] | unique' -c <<<"$output")" = '[2]' ]
	run -1 klog-group -Z "$ZKC" topics -t checked
	run -0 ck "
fs = a.describe_configs([ConfigResource('topic', 'rt')])
for r, f in fs.items():
    c = f.result()
    print(c['min.insync.replicas'].value, c['num.partitions'].value)"
	[ "$output" = '2 3' ]
	run -0 ck "show(a.delete_topics(['rt', 'one']))"
	[ "$output" = "$(printf 'one ok\nrt ok')" ]
	# The brokers finish it: no node, no directory left.
	local n=100
	until ! klog-group -Z "$ZKC" topics -t rt >/dev/null 2>&1 &&
	    [ -z "$(ls -d "$TMP"/broker-*/rt-* 2>/dev/null)" ]; do
		n=$((n - 1))
		[ "$n" -gt 0 ]
		sleep 0.1
	done
	stop_zk
}
