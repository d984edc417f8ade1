#!/usr/bin/env bats
# Kafka's idempotent producer on the Kafka listener (klog-kafka(7),
# IDEMPOTENCE): InitProducerId's ids, unique across restarts (the data
# directory's .producer-ids) and across brokers (ZooKeeper's
# /latest_producer_id_block, as Kafka's); the ACL rule; and
# confluent-kafka's idempotent producer through kill -9 of a standalone
# broker and of a replicated partition's leader: nothing lost, nothing
# twice, in order.

bats_require_minimum_version 1.5.0
load helpers
load kafka

setup() {
	common_setup
	unset KLOG_BROKERS KLOG_ZOOKEEPER KLOG_DATA_DIR
	# pid.py PORT [VERSION ID EPOCH [TXN]]...: InitProducerId requests on
	# one connection, each answer "ERROR ID EPOCH".
	cat >"$TMP/pid.py" <<-'EOF'
	import socket, struct, sys
	s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))
	def ask(version, pid, epoch, txn):
	    head = struct.pack('>hhih', 22, version, 7, 2) + b'kc'
	    flex = version >= 2
	    if flex:
	        head += b'\0'
	    if txn is None:
	        body = b'\0' if flex else struct.pack('>h', -1)
	    else:
	        t = txn.encode()
	        body = (bytes([len(t) + 1]) if flex else
	            struct.pack('>h', len(t))) + t
	    body += struct.pack('>i', 60000)
	    if version >= 3:
	        body += struct.pack('>qh', pid, epoch)
	    if flex:
	        body += b'\0'
	    req = head + body
	    s.sendall(struct.pack('>i', len(req)) + req)
	    size = struct.unpack('>i', s.recv(4))[0]
	    data = b''
	    while len(data) < size:
	        data += s.recv(size - len(data))
	    at = 5 if flex else 4
	    _, err, pid, epoch = struct.unpack('>ihqh', data[at:at + 16])
	    print(err, pid, epoch)
	a = sys.argv[2:]
	while a:
	    txn = None
	    if len(a) > 3 and not a[3].lstrip('-').isdigit():
	        txn = a[3]
	    ask(int(a[0]), int(a[1]), int(a[2]), txn)
	    a = a[4 if txn else 3:]
	EOF
}

teardown() {
	common_teardown
}

pid() {
	timeout 30 "$PY" "$TMP/pid.py" "$@"
}

@test "idempotence: InitProducerId hands out ids from a block reserved in the data directory, bumps a producer's epoch, refuses transactions" {
	start_kafka_broker
	run -0 pid "$KAFKA_PORT" 4 -1 -1  4 -1 -1  3 1 0  3 1 -1  0 -1 -1 \
	    1 -1 -1 txn
	[ "${lines[0]}" = '0 0 0' ]
	[ "${lines[1]}" = '0 1 0' ]
	# KIP-360: the producer's own id at its epoch plus one.
	[ "${lines[2]}" = '0 1 1' ]
	# An id without an epoch.
	[ "${lines[3]}" = '42 -1 -1' ]
	[ "${lines[4]}" = '0 2 0' ]
	# A transactional id: TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
	[ "${lines[5]}" = '53 -1 -1' ]
	# The block was reserved before its first id went out.
	[ "$(cat "$BROKER_DATA/.producer-ids")" = 1000 ]
	# kill -9: the rest of the block is never handed out.
	kill -KILL "$BROKER_PID"
	wait_gone "$BROKER_PID" 5
	start_kafka_broker
	run -0 pid "$KAFKA_PORT" 4 -1 -1
	[ "$output" = '0 1000 0' ]
	[ "$(cat "$BROKER_DATA/.producer-ids")" = 2000 ]
	# A file that does not read: no id at all, rather than one that may
	# have been handed out (COORDINATOR_NOT_AVAILABLE, which clients
	# retry), and a line saying why.
	kill -KILL "$BROKER_PID"
	wait_gone "$BROKER_PID" 5
	printf '2000x\n' >"$BROKER_DATA/.producer-ids"
	start_kafka_broker
	run -0 pid "$KAFKA_PORT" 4 -1 -1
	[ "$output" = '15 -1 -1' ]
	grep -q 'InitProducerId from client id "kc": no producer id: .*/.producer-ids: "2000x" is not a producer id' "$TMP/broker.log"
}

@test "idempotence: InitProducerId under ACLs: IDEMPOTENT_WRITE on the cluster, or WRITE on some topic (Kafka 2.8's rule)" {
	local acls=$TMP/acls
	: >"$acls"
	chmod 600 "$acls"
	start_kafka_broker --acls "$acls"
	run -0 pid "$KAFKA_PORT" 4 -1 -1
	[ "$output" = '31 -1 -1' ]
	# WRITE on a prefix of topics.
	klog-group --acls "$acls" acls add --allow-principal User:ANONYMOUS \
		--operation Write -t app- --prefixed >/dev/null
	kill -KILL "$BROKER_PID"
	wait_gone "$BROKER_PID" 5
	start_kafka_broker --acls "$acls"
	run -0 pid "$KAFKA_PORT" 4 -1 -1
	[ "$output" = '0 0 0' ]
	# ...denied on a shorter prefix: no topic left to write.
	klog-group --acls "$acls" acls add --deny-principal User:ANONYMOUS \
		--operation Write -t app --prefixed >/dev/null
	kill -KILL "$BROKER_PID"
	wait_gone "$BROKER_PID" 5
	start_kafka_broker --acls "$acls"
	run -0 pid "$KAFKA_PORT" 4 -1 -1
	[ "$output" = '31 -1 -1' ]
	# IDEMPOTENT_WRITE on the cluster (ALL in klog's words) is enough.
	klog-group --acls "$acls" acls add --allow-principal User:ANONYMOUS \
		--operation All --cluster >/dev/null
	kill -KILL "$BROKER_PID"
	wait_gone "$BROKER_PID" 5
	start_kafka_broker --acls "$acls"
	run -0 pid "$KAFKA_PORT" 4 -1 -1
	[ "$output" = '0 1000 0' ]
}

@test "idempotence: in a cluster, each broker takes its blocks from ZooKeeper's /latest_producer_id_block, as Kafka's brokers do" {
	start_zk
	ZKC="$ZK/pids"
	local k1 k2
	k1=$(free_port)
	k2=$(free_port)
	start_zk_broker 1 --kafka-listen "127.0.0.1:$k1"
	start_zk_broker 2 --kafka-listen "127.0.0.1:$k2"
	run -0 pid "$k1" 4 -1 -1  4 -1 -1
	[ "$output" = "$(printf '0 0 0\n0 1 0')" ]
	run -0 pid "$k2" 4 -1 -1
	[ "$output" = '0 1000 0' ]
	# Each took its first block at its start, and the next one ahead
	# when it began handing the first out: broker 1 2000-2999, broker 2
	# 3000-3999, the node's last.
	run -0 /usr/share/zookeeper/bin/zkCli.sh -server "$ZKC" \
	    get /latest_producer_id_block
	[[ $output == *'{"version":1,"broker":2,"block_start":"3000","block_end":"3999"}'* ]]
	# Broker 1 restarted takes a new block: its old ones' rest is lost.
	kill -TERM "${BROKER_PIDS[1]}"
	wait_gone "${BROKER_PIDS[1]}" 5
	start_zk_broker 1 --kafka-listen "127.0.0.1:$k1"
	wait_port "$k1" 5
	run -0 pid "$k1" 4 -1 -1
	[ "$output" = '0 4000 0' ]
	stop_zk
}

@test "idempotence: in a cluster the next block is taken ahead, and InitProducerId never waits on ZooKeeper: paused, ids come from the blocks in hand, then COORDINATOR_LOAD_IN_PROGRESS at once" {
	start_zk
	ZKC="$ZK/ahead"
	local k1 args t0 t1 n=100
	k1=$(free_port)
	start_zk_broker 1 --kafka-listen "127.0.0.1:$k1" \
	    --zk-session-timeout 6000
	wait_port "$k1" 5
	run -0 pid "$k1" 4 -1 -1
	[ "$output" = '0 0 0' ]
	# The block after 0-999 is taken meanwhile.
	until /usr/share/zookeeper/bin/zkCli.sh -server "$ZKC" \
	    get /latest_producer_id_block 2>/dev/null |
	    grep -q '"block_start":"1000"'; do
		n=$((n - 1))
		[ "$n" -gt 0 ]
		sleep 0.1
	done
	# ZooKeeper paused (its connections open, nothing answered, as
	# across a silent partition): 1999 ids from the two blocks in hand,
	# then a retriable refusal, none of it waiting on ZooKeeper (a
	# synchronous read held the broker until the connection timed out,
	# seconds, then refused).
	kill -STOP "$ZK_PID"
	args=$(for i in $(seq 2000); do printf ' 4 -1 -1'; done)
	t0=$(date +%s%N)
	# shellcheck disable=SC2086
	run -0 pid "$k1" $args
	t1=$(date +%s%N)
	kill -CONT "$ZK_PID"
	echo "2000 InitProducerId with ZooKeeper paused: $(( (t1 - t0) / 1000000 )) ms" >&3
	[ "${#lines[@]}" -eq 2000 ]
	[ "${lines[0]}" = '0 1 0' ]
	[ "${lines[1998]}" = '0 1999 0' ]
	[ "${lines[1999]}" = '14 -1 -1' ]
	[ "$(printf '%s\n' "${lines[@]:0:1999}" | cut -d' ' -f2 | sort -un | wc -l)" -eq 1999 ]
	[ $(( (t1 - t0) / 1000000 )) -lt 2000 ]
	grep -q 'no producer id yet' "$TMP/broker-1.log"
	# ZooKeeper answering again, the next block comes.
	n=100
	until run pid "$k1" 4 -1 -1 && [ "$output" = '0 2000 0' ]; do
		n=$((n - 1))
		[ "$n" -gt 0 ]
		sleep 0.1
	done
	stop_zk
}

# restart_kafka_broker ARGS...: start_kafka_broker's broker again, on its
# ports and data directory.
restart_kafka_broker() {
	start_broker --kafka-listen "$KAFKA" "$@" && wait_port "$KAFKA_PORT" 5
}

# wait_acked N: until the producer has N records acknowledged.
wait_acked() {
	local n=600
	until [ "$(cat "$TMP/progress" 2>/dev/null || echo 0)" -ge "$1" ]; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.1
	done
}

# check_read TOPIC N: the topic's records, read by kcat, are "0".."N-1"
# once each, in order.
check_read() {
	kc -C -t "$1" -p 0 -o beginning -e -f '%s\n' >"$TMP/read"
	seq -f '%08g' 0 $(($2 - 1)) >"$TMP/want"
	sort "$TMP/read" | uniq -d >"$TMP/dups"
	echo "read $(wc -l <"$TMP/read"), duplicated $(wc -l <"$TMP/dups")" >&3
	[ ! -s "$TMP/dups" ]
	cmp "$TMP/read" "$TMP/want"
}

@test "idempotence: acknowledgements lost on the way: the batches sent again are answered with their first offsets, not written twice" {
	local n=20000 prod pport
	pport=$(free_port)
	start_kafka_broker --topic idem:1 --kafka-advertise "127.0.0.1:$pport"
	"$PY" "$BATS_TEST_DIRNAME/ackdrop.py" "$pport" "$KAFKA_PORT" "$TMP/drop" &
	PIDS+=("$!")
	wait_port "$pport" 5
	"$PY" "$BATS_TEST_DIRNAME/idemprod.py" "127.0.0.1:$pport" idem "$n" "$TMP/progress" \
	    >"$TMP/producer.out" 2>"$TMP/producer.err" &
	prod=$!
	PIDS+=("$prod")
	for at in 4000 9000 14000; do
		wait_acked "$at"
		touch "$TMP/drop"
	done
	wait "$prod"
	cat "$TMP/producer.out" >&3
	[ "$(cat "$TMP/producer.out")" = "acked $n failed 0 left 0 []" ]
	check_read idem "$n"
}

@test "idempotence: confluent-kafka's idempotent producer through two kill -9 of the broker: nothing lost, nothing twice, in order" {
	local n=30000 prod
	# Acknowledgements wait up to 300 ms for a flush, so that each kill
	# finds batches written and not yet acknowledged, which the producer
	# sends again.
	start_kafka_broker --topic idem:1 --flush-ms 300
	"$PY" "$BATS_TEST_DIRNAME/idemprod.py" "$KAFKA" idem "$n" "$TMP/progress" \
	    >"$TMP/producer.out" 2>"$TMP/producer.err" &
	prod=$!
	PIDS+=("$prod")
	for at in 5000 14000; do
		wait_acked "$at"
		kill -KILL "$BROKER_PID"
		wait_gone "$BROKER_PID" 5
		restart_kafka_broker --topic idem:1 --flush-ms 300
	done
	wait "$prod"
	cat "$TMP/producer.out" >&3
	[ "$(cat "$TMP/producer.out")" = "acked $n failed 0 left 0 []" ]
	check_read idem "$n"
	# Each restart rebuilt the producers from the log.
	[ "$(grep -c 'producer state: 0 snapshots unreadable' "$TMP/broker.log")" -ge 2 ]
}

@test "idempotence: a replicated partition's leader killed -9 mid-stream: the new leader knows the producer from what it copied; nothing lost, nothing twice, in order" {
	local n=20000 prod leader id boot=
	declare -A kp
	start_zk
	ZKC="$ZK/rep"
	# A leader flushes 300 ms after its last append, its followers at
	# once: batches are copied while their acknowledgement waits, so the
	# kill leaves the new leader holding batches the producer sends again.
	for id in 1 2 3; do
		kp[$id]=$(free_port)
		start_zk_broker "$id" --zk-session-timeout 2000 --flush-ms 300 \
		    --replica-lag-time 3s --kafka-listen "127.0.0.1:${kp[$id]}"
		boot="$boot${boot:+,}127.0.0.1:${kp[$id]}"
	done
	klog-group -Z "$ZKC" -H create-topic -t rt --partitions 1 \
		--replication-factor 3 --min-insync-replicas 2 >/dev/null
	leader=
	until [ -n "$leader" ] && [ "$leader" -ge 0 ]; do
		sleep 0.1
		leader=$(klog-group -Z "$ZKC" -H -J topics -t rt | jq -r .leader)
	done
	"$PY" "$BATS_TEST_DIRNAME/idemprod.py" "$boot" rt "$n" "$TMP/progress" \
	    >"$TMP/producer.out" 2>"$TMP/producer.err" &
	prod=$!
	PIDS+=("$prod")
	wait_acked 6000
	kill -KILL "${BROKER_PIDS[$leader]}"
	wait "$prod"
	cat "$TMP/producer.out" >&3
	[ "$(cat "$TMP/producer.out")" = "acked $n failed 0 left 0 []" ]
	for id in 1 2 3; do
		[ "$id" != "$leader" ] && KAFKA="127.0.0.1:${kp[$id]}"
	done
	check_read rt "$n"
	# The new leader took the producer's next batch: it was no stranger
	# (UNKNOWN_PRODUCER_ID would have made the producer bump its epoch).
	! grep 'producer state\|refused' "$TMP"/broker-[123].log | grep -v \
	    'scanned' >&3
	! grep -q 'refused' "$TMP"/broker-[123].log
	stop_zk
}
