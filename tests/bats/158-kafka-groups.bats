#!/usr/bin/env bats
# The Kafka listener's group APIs at the versions Debian's clients pick
# when offered Kafka 2.1's and more: librdkafka's JoinGroup 5 (with
# KIP-394's member id round), SyncGroup 3, OffsetCommit 7 and OffsetFetch
# 7 (flexible); kafka-python's group and admin client; ListGroups and
# DescribeGroups through confluent-kafka's AdminClient, as ACLs allow.

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

# wait_file FILE TEXT SECONDS: until FILE has TEXT.
wait_file() {
	local n=$(( $3 * 10 ))
	until grep -qF "$2" "$1" 2>/dev/null; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.1
	done
}

@test "kafka groups: two librdkafka members at JoinGroup 5, SyncGroup 3, OffsetCommit 7, OffsetFetch 7 rebalance as one joins and one leaves; a third resumes from their commits" {
	start_kafka_broker --topic grp:4
	seq 2000 | klog-produce -t grp
	# A member stops once it has held what it waits for and then a
	# second without a message: the first, two partitions (the second
	# one is in); the second, all four after two (the first has left).
	cat >"$TMP/member.py" <<-'EOF2'
	import sys, time
	from confluent_kafka import Consumer
	want = int(sys.argv[2])
	c = Consumer({"bootstrap.servers": sys.argv[1], "group.id": "pair",
	              "auto.offset.reset": "earliest", "session.timeout.ms": 6000,
	              "heartbeat.interval.ms": 300, "debug": "protocol,cgrp"})
	assigned = []
	quiet = [time.time()]
	def on_assign(c, ps):
	    assigned.append(sorted(p.partition for p in ps))
	    print("assigned", assigned[-1], flush=True)
	    quiet[0] = time.time()
	c.subscribe(["grp"], on_assign=on_assign)
	def done():
	    return (assigned and len(assigned[-1]) == want and
	            any(len(a) == 2 for a in assigned) and time.time() - quiet[0] > 1)
	end = time.time() + 20
	n = 0
	while time.time() < end and not done():
	    m = c.poll(0.1)
	    if m is not None and m.error() is None:
	        n += 1
	        quiet[0] = time.time()
	c.close()
	print("read", n, flush=True)
	EOF2
	"$PY" "$TMP/member.py" "$KAFKA" 2 >"$TMP/a" 2>"$TMP/a.log" &
	a=$!
	wait_file "$TMP/a" assigned 10
	"$PY" "$TMP/member.py" "$KAFKA" 4 >"$TMP/b" 2>"$TMP/b.log" &
	b=$!
	wait "$a"
	wait "$b"
	# The versions librdkafka 2.0.2 picks, and KIP-394's round.
	for v in 'JoinGroupRequest (v5' 'SyncGroupRequest (v3' \
	    'OffsetCommitRequest (v7' 'OffsetFetchRequest (v7' \
	    'HeartbeatRequest (v3' 'FindCoordinatorRequest (v2'; do
		grep -q "Sent $v" "$TMP/a.log"
	done
	grep -q 'Group member needs a valid member ID' "$TMP/a.log"
	grep -q 'Sent LeaveGroupRequest (v1' "$TMP/a.log"
	# Both in, two partitions each; the first gone, the second all four.
	grep -q 'generation [0-9]*: 2 members' "$TMP/broker.log"
	grep -Eq 'assigned \[[0-3], [0-3]\]$' "$TMP/a"
	[ "$(grep assigned "$TMP/b" | tail -1)" = "assigned [0, 1, 2, 3]" ]
	[ $(( $(grep read "$TMP/a" | cut -d' ' -f2) +
	    $(grep read "$TMP/b" | cut -d' ' -f2) )) -ge 2000 ]
	# A third member resumes from what they committed: nothing old, then
	# exactly what comes after.
	# It stops a second after it has had its assignment and what it
	# waits for (new messages show once the broker has flushed them).
	cat >"$TMP/third.py" <<-'EOF2'
	import sys, time
	from confluent_kafka import Consumer
	want = int(sys.argv[2])
	c = Consumer({"bootstrap.servers": sys.argv[1], "group.id": "pair",
	              "auto.offset.reset": "earliest"})
	got = []
	c.subscribe(["grp"], on_assign=lambda c, ps: got.append(time.time()))
	n, end, last = 0, time.time() + 15, 0
	while time.time() < end and not (got and n >= want and
	                                 time.time() - max(got[-1], last) > 1):
	    m = c.poll(0.1)
	    if m is not None and m.error() is None:
	        n += 1
	        last = time.time()
	c.close()
	print(n)
	EOF2
	run -0 "$PY" "$TMP/third.py" "$KAFKA" 0
	[ "$output" = 0 ]
	seq 100 | klog-produce -t grp
	run -0 "$PY" "$TMP/third.py" "$KAFKA" 100
	[ "$output" = 100 ]
}

@test "kafka groups: kafka-python infers 0.10.2 or later; its group reads and commits; KafkaAdminClient lists, describes and fetches every offset" {
	start_kafka_broker --topic kp:2
	seq 500 | klog-produce -t kp
	run -0 "$PY" - "$KAFKA" <<-'EOF2'
	import sys
	from kafka import KafkaConsumer, TopicPartition
	from kafka.admin import KafkaAdminClient
	c = KafkaConsumer("kp", bootstrap_servers=sys.argv[1], group_id="kg",
	                  auto_offset_reset="earliest", enable_auto_commit=False,
	                  consumer_timeout_ms=1500)
	print("inferred", ".".join(map(str, c.config["api_version"])))
	assert c.config["api_version"] >= (0, 10, 2)
	n = sum(1 for _ in c)
	assert n == 500, n
	c.commit()
	a = KafkaAdminClient(bootstrap_servers=sys.argv[1])
	assert ("kg", "consumer") in a.list_consumer_groups()
	g = a.describe_consumer_groups(["kg"])[0]
	assert (g.state, g.protocol_type, g.protocol) == ("Stable", "consumer",
	                                                  "range"), g
	m = g.members[0]
	assert m.client_id == "kafka-python-2.0.2" and m.client_host == "/127.0.0.1", m
	assert sorted(m.member_assignment.assignment[0][1]) == [0, 1], m
	# A null topics array (OffsetFetch 2+): every offset the group has.
	offs = a.list_consumer_group_offsets("kg")
	tps = [TopicPartition("kp", p) for p in (0, 1)]
	assert {tp: offs[tp].offset for tp in tps} == c.end_offsets(tps), offs
	c.close()
	assert a.describe_consumer_groups(["kg"])[0].state == "Empty"
	assert a.describe_consumer_groups(["none"])[0].state == "Dead"
	a.close()
	EOF2
	echo "$output" | grep -q '^inferred '
}

@test "kafka groups: AdminClient.list_groups() shows a kcat -G member with its client, host, metadata and assignment, and a group of offsets alone as Empty" {
	start_kafka_broker --topic kg:2
	seq 10 | klog-produce -t kg
	kcat -b "$KAFKA" -q -u -G readers -o beginning kg >"$TMP/kc.out" 2>&1 &
	kc_pid=$!
	PIDS+=("$kc_pid")
	wait_log 'kafka group "readers": generation 1: 1 member' 10
	cat >"$TMP/list.py" <<-'EOF2'
	import sys
	from confluent_kafka import Consumer, TopicPartition
	from confluent_kafka.admin import AdminClient
	if sys.argv[2] == "commit":
	    # Offsets committed from outside any group's membership.
	    c = Consumer({"bootstrap.servers": sys.argv[1], "group.id": "old"})
	    c.commit(offsets=[TopicPartition("kg", 0, 9)], asynchronous=False)
	    c.close()
	a = AdminClient({"bootstrap.servers": sys.argv[1]})
	for g in sorted(a.list_groups(timeout=10), key=lambda g: g.id):
	    print(g.id, g.state, g.protocol_type or "-", g.protocol or "-",
	          [(m.client_id, m.client_host, len(m.metadata) > 0,
	            len(m.assignment) > 0) for m in g.members])
	EOF2
	run -0 "$PY" "$TMP/list.py" "$KAFKA" commit
	[ "${lines[0]}" = "old Empty - - []" ]
	[ "${lines[1]}" = "readers Stable consumer range [('rdkafka', '/127.0.0.1', True, True)]" ]
	# kcat leaves, once it has read all; its group stays, Empty, for the
	# offsets it committed.
	wait_file "$TMP/kc.out" 10 10
	kill -TERM "$kc_pid"
	wait_log 'kafka group "readers": generation 2: empty' 10
	run -0 "$PY" "$TMP/list.py" "$KAFKA" list
	[ "${lines[1]}" = "readers Empty - - []" ]
}

@test "kafka groups: with ACLs ListGroups lists the groups the principal may describe; DescribeGroups and OffsetFetch without DESCRIBE get 30" {
	mkdir -p "$TMP/broker-data/.kafka-offsets"
	for g in seen hidden; do
		printf 'klog-kafka-offsets 1\nt 0 42 -\n' \
			>"$TMP/broker-data/.kafka-offsets/$g"
	done
	klog-group --acls "$TMP/acls" acls add --allow-principal User:ANONYMOUS \
		--operation describe --group seen >/dev/null
	klog-group --acls "$TMP/acls" acls add --allow-principal User:ANONYMOUS \
		--operation describe --topic t >/dev/null
	start_kafka_broker --topic t:1 --acls "$TMP/acls"
	run -0 "$PY" - "$KAFKA" <<-'EOF2'
	import sys
	from confluent_kafka.admin import AdminClient
	from kafka.admin import KafkaAdminClient
	from kafka.errors import GroupAuthorizationFailedError
	from kafka import TopicPartition
	a = AdminClient({"bootstrap.servers": sys.argv[1]})
	print([(g.id, g.state) for g in a.list_groups(timeout=10)])
	k = KafkaAdminClient(bootstrap_servers=sys.argv[1])
	g = k.describe_consumer_groups(["seen"], group_coordinator_id=0)[0]
	print(g.group, g.state, g.authorized_operations)
	o = k.list_consumer_group_offsets("seen", group_coordinator_id=0)
	print(o[TopicPartition("t", 0)].offset)
	for call in (lambda: k.describe_consumer_groups(["hidden"],
	                                                group_coordinator_id=0),
	             lambda: k.list_consumer_group_offsets("hidden",
	                                                   group_coordinator_id=0)):
	    try:
	        call()
	        print("not refused")
	    except GroupAuthorizationFailedError as e:
	        print("refused", e.errno)
	EOF2
	[ "${lines[0]}" = "[('seen', 'Empty')]" ]
	[ "${lines[1]}" = "seen Empty None" ]
	[ "${lines[2]}" = 42 ]
	[ "${lines[3]}" = "refused 30" ]
	[ "${lines[4]}" = "refused 30" ]
	grep -q 'denied DESCRIBE on GROUP hidden' "$TMP/broker.log"
	! grep -q 'denied DESCRIBE on CLUSTER' "$TMP/broker.log"
}

@test "kafka groups: versions no Debian client sends: ListGroups 4's states filter, DescribeGroups 4's operations; FindCoordinator's transaction key refused, a transactional producer stops at once" {
	start_kafka_broker --topic t:1
	run -0 "$PY" - "$KAFKA" <<-'EOF2'
	import socket, struct, sys
	from confluent_kafka import Consumer, TopicPartition
	c = Consumer({"bootstrap.servers": sys.argv[1], "group.id": "old"})
	c.commit(offsets=[TopicPartition("t", 0, 5)], asynchronous=False)
	c.close()
	host, port = sys.argv[1].split(":")
	s = socket.create_connection((host, int(port)))
	def call(api, ver, body, flex):
	    hdr = struct.pack(">hhih", api, ver, 7, 2) + b"kc" + (b"\0" if flex else b"")
	    s.sendall(struct.pack(">i", len(hdr) + len(body)) + hdr + body)
	    n = struct.unpack(">i", s.recv(4, socket.MSG_WAITALL))[0]
	    r = s.recv(n, socket.MSG_WAITALL)
	    assert struct.unpack(">i", r[:4])[0] == 7
	    return r[5:] if flex else r[4:]
	# ListGroups 4 (flexible): states filter, compact strings.
	for state in (b"Empty", b"Stable"):
	    r = call(16, 4, b"\x02" + bytes([len(state) + 1]) + state + b"\0", 1)
	    print(state.decode(), r.hex())
	# DescribeGroups 4 with authorized operations.
	r = call(15, 4, struct.pack(">ih", 1, 3) + b"old" + b"\1", 0)
	print("describe", r[-4:].hex())
	# FindCoordinator 2: a transaction coordinator (1), an unknown type (2).
	for t in (1, 2):
	    r = call(10, 2, struct.pack(">h", 2) + b"tx" + bytes([t]), 0)
	    err, mlen = struct.unpack(">hh", r[4:8])
	    print("find", t, err, r[8:8 + mlen].decode())
	EOF2
	# throttle 0, error 0, one group "old", protocol type "", state
	# "Empty", tags; none listed for Stable.
	[ "${lines[0]}" = "Empty 00000000000002046f6c640106456d7074790000" ]
	[ "${lines[1]}" = "Stable 0000000000000100" ]
	# READ (3), DELETE (6) and DESCRIBE (8): everything, without ACLs.
	[ "${lines[2]}" = "describe 00000148" ]
	[ "${lines[3]}" = "find 1 53 klog has no transactions" ]
	[ "${lines[4]}" = "find 2 42 unknown coordinator type" ]
	# librdkafka's transactional producer takes the refusal as final.
	run -0 timeout 20 "$PY" - "$KAFKA" <<-'EOF2'
	import os, sys
	from confluent_kafka import KafkaException, Producer
	os.dup2(os.open(os.devnull, os.O_WRONLY), 2)   # librdkafka's log
	p = Producer({"bootstrap.servers": sys.argv[1], "transactional.id": "tx"})
	try:
	    p.init_transactions(15)
	except KafkaException as e:
	    print(e.args[0].fatal(), e.args[0].str())
	EOF2
	[[ "${lines[0]}" == "True Failed to find transaction coordinator: "*": Broker: Transactional Id authorization failed: klog has no transactions" ]]
}
