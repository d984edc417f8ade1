#!/usr/bin/env bats
# The broker enforcing its ACLs (klog-serve --acls FILE, klog-security(7)):
# principals from client certificates on the Kafka listener over mTLS,
# kcat's own errors for each refusal, the file edited with klog-group acls
# and taken up without a restart; the native tools' refusals with their
# exit status (77); topic administration; a replica fetching as another
# broker; super users; deny wins; the file's refusals at start and at a
# reload.

bats_require_minimum_version 1.5.0
load helpers
load kafka

ALICE='User:CN=alice,O=klog'

setup() {
	common_setup
	unset KLOG_BROKERS KLOG_ZOOKEEPER KLOG_DATA_DIR
	ACLS=$TMP/acls
	mkdir -p "$TMP/pki"
	ca ca && cert server localhost && cert alice alice && cert admin admin &&
	cert broker-2 broker-2
}

teardown() {
	common_teardown
}

# ca NAME: a self-signed CA; cert NAME CN: a key and a certificate
# NAME.pem with subject /O=klog/CN=CN signed by it (127.0.0.1 in its
# names), so its principal is User:CN=CN,O=klog.
ca() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$TMP/pki/$1.key" -out "$TMP/pki/$1.pem" -days 2 \
		-subj "/CN=$1" 2>/dev/null
}

cert() {
	local d=$TMP/pki
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$d/$1.key" -out "$d/$1.csr" -subj "/O=klog/CN=$2" \
		2>/dev/null &&
	printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$d/ext" &&
	openssl x509 -req -in "$d/$1.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" \
		-CAcreateserial -out "$d/$1.pem" -days 2 -extfile "$d/ext" \
		2>/dev/null
}

acls() {
	klog-group --acls "$ACLS" acls "$@"
}

# start_acl_broker [options]: the native listener in plaintext (the
# native tools are User:ANONYMOUS there), the Kafka one over mTLS.
start_acl_broker() {
	[ -f "$ACLS" ] || acls add --allow-principal 'User:nobody' \
		--operation read --topic none >/dev/null
	KAFKA_PORT=$(free_port)
	KAFKA="127.0.0.1:$KAFKA_PORT"
	start_broker --kafka-listen "SSL://$KAFKA" \
		--ssl-cert "$TMP/pki/server.pem" \
		--ssl-key "$TMP/pki/server.key" --ssl-ca "$TMP/pki/ca.pem" \
		--ssl-client-auth required --acls "$ACLS" "$@" &&
	wait_port "$KAFKA_PORT" 5
}

# as NAME ARGS...: kcat over mTLS with NAME's certificate.
as() {
	local who=$1
	shift
	timeout 60 kcat -b "$KAFKA" -X security.protocol=ssl \
		-X ssl.ca.location="$TMP/pki/ca.pem" \
		-X ssl.certificate.location="$TMP/pki/$who.pem" \
		-X ssl.key.location="$TMP/pki/$who.key" "$@"
}

# wait_log TEXT SECONDS: until the broker's log has TEXT.
wait_log() {
	local n=$(( $2 * 10 ))
	until grep -qF -- "$1" "$TMP/broker.log"; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.1
	done
}

@test "acls: kcat without READ, WRITE or DESCRIBE gets Kafka's 29; the ACLs added, no restart, it works within 2 s" {
	start_acl_broker --topic t:1 --topic hidden:1

	run -1 as alice -C -t t -e
	[[ $output == *"Topic t error: Broker: Topic authorization failed"* ]]
	run -1 as alice -P -t t <<<one
	[[ $output == *"Delivery failed for message: Broker: Topic authorization failed"* ]]
	run -0 as alice -L -t t
	[[ $output == *'topic "t" with 0 partitions: Broker: Topic authorization failed'* ]]
	# Every topic: those it may not describe are left out.
	run -0 as alice -L
	[[ $output == *" 0 topics:"* ]]
	grep -q "ACLs: $ALICE from 127.0.0.1 denied DESCRIBE on TOPIC t" \
		"$TMP/broker.log"

	acls add --allow-principal "$ALICE" --operation read \
		--operation write --topic t >/dev/null
	wait_log "ACLs: $ACLS: 3 ACLs in force" 2
	echo one | as alice -q -P -t t
	run -0 as alice -q -C -t t -o beginning -e
	[ "$output" = one ]
	run -0 as alice -L
	[[ $output == *'topic "t" with 1 partitions'* ]]
	[[ $output != *hidden* ]]
	run -0 as alice -L -t hidden
	[[ $output == *"Topic authorization failed"* ]]
}

@test "acls: a super user may do everything; a DENY wins over an ALLOW" {
	acls add --allow-principal 'User:*' --operation all --topic t >/dev/null
	acls add --deny-principal "$ALICE" --operation write --topic t \
		>/dev/null
	start_acl_broker --topic t:1 --super-users "User:CN=admin,O=klog"
	echo first | as admin -q -P -t t
	echo second | as admin -q -P -t new
	run -0 as admin -q -C -t new -o beginning -e
	[ "$output" = second ]
	run -1 as alice -P -t t <<<x
	[[ $output == *"Topic authorization failed"* ]]
	run -0 as alice -q -C -t t -o beginning -e
	[ "$output" = first ]
	# CREATE on the cluster or the topic: alice may not auto-create.
	run -0 as alice -L -t other
	[[ $output == *'topic "other" with 0 partitions: Broker: Topic authorization failed'* ]]
	[ ! -d "$BROKER_DATA/other-0" ]
}

@test "acls: a consumer group without READ on the group gets GROUP_AUTHORIZATION_FAILED (30)" {
	acls add --allow-principal "$ALICE" --operation read --topic t >/dev/null
	start_acl_broker --topic t:1 --super-users "User:CN=admin,O=klog"
	cat >"$TMP/group.py" <<-PY
	import sys, confluent_kafka as ck
	c = ck.Consumer({"bootstrap.servers": "$KAFKA", "group.id": "g",
	    "security.protocol": "ssl", "ssl.ca.location": "$TMP/pki/ca.pem",
	    "ssl.certificate.location": "$TMP/pki/alice.pem",
	    "ssl.key.location": "$TMP/pki/alice.key",
	    "auto.offset.reset": "earliest"})
	c.subscribe(["t"])
	for _ in range(40):
	    m = c.poll(0.25)
	    if m is not None and m.error():
	        print(m.error().code(), m.error().str())
	        sys.exit(0)
	sys.exit(1)
	PY
	run -0 timeout 60 "$PY" "$TMP/group.py"
	[[ $output == *"Group authorization failed"* ]]
	[[ $output == "30 "* ]]

	# READ on the group too: the group reads and commits.
	acls add --allow-principal "$ALICE" --operation read --group g \
		>/dev/null
	wait_log "ACLs: $ACLS: 2 ACLs in force" 2
	echo one | as admin -q -P -t t
	cat >"$TMP/read.py" <<-PY
	import sys, confluent_kafka as ck
	c = ck.Consumer({"bootstrap.servers": "$KAFKA", "group.id": "g",
	    "security.protocol": "ssl", "ssl.ca.location": "$TMP/pki/ca.pem",
	    "ssl.certificate.location": "$TMP/pki/alice.pem",
	    "ssl.key.location": "$TMP/pki/alice.key",
	    "auto.offset.reset": "earliest", "enable.auto.commit": False})
	c.subscribe(["t"])
	for _ in range(80):
	    m = c.poll(0.25)
	    if m is not None and not m.error():
	        c.commit(message=m, asynchronous=False)
	        print(m.value().decode(), c.committed(
	            [ck.TopicPartition("t", 0)])[0].offset > 0)
	        sys.exit(0)
	    if m is not None:
	        print(m.error().str())
	sys.exit(1)
	PY
	run -0 timeout 60 "$PY" "$TMP/read.py"
	[ "$output" = "one True" ]
}

@test "acls: the native tools refused print one line and exit 77; with ACLs for User:ANONYMOUS they work" {
	start_acl_broker --topic t:1
	run -77 --separate-stderr bash -c 'echo x | klog-produce -t t'
	[ "${stderr_lines[0]}" = 'klog-produce: topic "t": not authorized (TOPIC_AUTHORIZATION_FAILED)' ]
	run -77 --separate-stderr klog-consume -t t -o beginning -e
	[ "$stderr" = 'klog-consume: topic "t": not authorized (TOPIC_AUTHORIZATION_FAILED)' ]
	# DESCRIBE but no WRITE: refused per partition by the produce.
	acls add --allow-principal User:ANONYMOUS --operation describe \
		--topic t >/dev/null
	wait_log "ACLs: $ACLS: 2 ACLs in force" 2
	run -77 --separate-stderr bash -c 'echo x | klog-produce -t t'
	[[ $stderr == *'topic "t" partition 0: not authorized (TOPIC_AUTHORIZATION_FAILED)'* ]]
	# WRITE but no READ: written, and the fetch refused per partition.
	acls add --allow-principal User:ANONYMOUS --operation write \
		--topic t >/dev/null
	wait_log "ACLs: $ACLS: 3 ACLs in force" 2
	echo hello | klog-produce -t t
	run -77 --separate-stderr klog-consume -t t -o beginning -e
	[ "$stderr" = 'klog-consume: topic "t" partition 0: not authorized (TOPIC_AUTHORIZATION_FAILED)' ]
	acls add --allow-principal User:ANONYMOUS --operation read --topic t \
		>/dev/null
	wait_log "ACLs: $ACLS: 4 ACLs in force" 2
	run -0 klog-consume -t t -o beginning -e
	[ "$output" = hello ]
}

@test "acls: delete-topic, create-topic and alter-topic need DELETE, CREATE and ALTER" {
	acls add --allow-principal User:ANONYMOUS --operation read --topic t \
		>/dev/null
	start_acl_broker --topic t:1
	run -77 --separate-stderr klog-group -b "$KLOG_BROKERS" delete-topic -t t
	[ "$stderr" = 'klog-group: delete-topic: topic "t": not authorized (TOPIC_AUTHORIZATION_FAILED)' ]
	[ -d "$BROKER_DATA/t-0" ]
	run -0 klog-consume -t t -o beginning -e
	run -77 --separate-stderr klog-group -b "$KLOG_BROKERS" create-topic -t u --partitions 1
	[ ! -d "$BROKER_DATA/u-0" ]
	run -77 --separate-stderr klog-group -b "$KLOG_BROKERS" alter-topic -t t --partitions 2
	[ ! -d "$BROKER_DATA/t-1" ]
	grep -q 'ACLs: User:ANONYMOUS from 127.0.0.1 denied DELETE on TOPIC t' \
		"$TMP/broker.log"

	acls add --allow-principal User:ANONYMOUS --operation delete \
		--operation alter --topic t >/dev/null
	acls add --allow-principal User:ANONYMOUS --operation create \
		--cluster >/dev/null
	wait_log "ACLs: $ACLS: 4 ACLs in force" 2
	klog-group -b "$KLOG_BROKERS" create-topic -t u --partitions 1 >/dev/null
	[ -d "$BROKER_DATA/u-0" ]
	klog-group -b "$KLOG_BROKERS" alter-topic -t t --partitions 2 >/dev/null
	klog-group -b "$KLOG_BROKERS" delete-topic -t t >/dev/null
	run -1 klog-consume -t t -o beginning -e
}

# rfetch PORT CERT REPLICA_ID: one REPLICA_FETCH over TLS with CERT's
# key; prints the response header's error.
rfetch() {
	"$PY" - "$@" <<-'PY'
	import socket, ssl, struct, sys
	port, cert, rid = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
	ctx = ssl.create_default_context(cafile=cert.rsplit("/", 1)[0] + "/ca.pem")
	ctx.load_cert_chain(cert + ".pem", cert + ".key")
	s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)),
	    server_hostname="127.0.0.1")
	topic = b"t"
	body = struct.pack(">iii", rid, 0, 0) + struct.pack(">h", len(topic)) + \
	    topic + struct.pack(">iqqii", 0, 0, 0, -1, 65536)
	s.sendall(struct.pack(">ihhi", 8 + len(body), 6, 1, 7) + body)
	head = b""
	while len(head) < 10:
	    chunk = s.recv(10 - len(head))
	    if not chunk:
	        sys.exit("closed")
	    head += chunk
	size, corr, err = struct.unpack(">iih", head)
	print(err)
	PY
}

@test "acls: a REPLICA_FETCH from a broker's certificate claiming another broker's id is refused with CLUSTER_AUTHORIZATION_FAILED (28)" {
	acls add --allow-principal 'User:CN=broker-2,O=klog' \
		--operation clusteraction --cluster >/dev/null
	acls add --allow-principal "$ALICE" --operation clusteraction \
		--cluster >/dev/null
	PORT=$(free_port)
	klog-serve -d "$TMP/data" -l "SSL://127.0.0.1:$PORT" --topic t:1 \
		--ssl-cert "$TMP/pki/server.pem" \
		--ssl-key "$TMP/pki/server.key" --ssl-ca "$TMP/pki/ca.pem" \
		--ssl-client-auth required --acls "$ACLS" 2>>"$TMP/broker.log" &
	PIDS+=($!)
	wait_port "$PORT" 5
	run -0 rfetch "$PORT" "$TMP/pki/broker-2" 3
	[ "$output" = 28 ]
	run -0 rfetch "$PORT" "$TMP/pki/alice" 2
	[ "$output" = 28 ]
	# Its own id passes the check (the topic is not replicated: the
	# core's answer, in the body).
	run -0 rfetch "$PORT" "$TMP/pki/broker-2" 2
	[ "$output" = 0 ]
	grep -q 'denied replica fetches as broker 3' "$TMP/broker.log"
}

@test "acls: a bad ACL file fails the start with FILE:LINE (65); a bad new file keeps the ACLs in force, said once" {
	printf 'allow read topic literal t User:a\nallow nonsense\n' >"$ACLS"
	chmod 600 "$ACLS"
	run -65 --separate-stderr klog-serve -d "$TMP/d" -l "127.0.0.1:$(free_port)" \
		--acls "$ACLS"
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == "klog-serve: $ACLS:2: "* ]]
	run -64 --separate-stderr klog-serve -d "$TMP/d" --super-users User:a
	[[ ${stderr_lines[0]} == *"need --acls"* ]]
	run -64 --separate-stderr klog-serve -d "$TMP/d" --acls "$ACLS" \
		--replica-principal User:broker
	[[ ${stderr_lines[0]} == *"no {id}"* ]]

	rm "$ACLS"
	acls add --allow-principal User:ANONYMOUS --operation all --topic t \
		>/dev/null
	start_broker --topic t:1 --acls "$ACLS"
	echo one | klog-produce -t t
	echo 'deny all topic literal t' >>"$ACLS"
	wait_log "$ACLS:3: " 2
	sleep 1.2
	[ "$(grep -c "$ACLS:3: " "$TMP/broker.log")" -eq 1 ]
	grep -q 'keeping the 1 ACLs in force' "$TMP/broker.log"
	run -0 klog-consume -t t -o beginning -e
	[ "$output" = one ]
}

@test "acls: --acls, --super-users and --allow-everyone-if-no-acl-found as config-file keys" {
	acls add --allow-principal "$ALICE" --operation read --topic t >/dev/null
	cat >"$TMP/serve.conf" <<-CONF
	acls = $ACLS
	super-users = User:CN=admin,O=klog
	allow-everyone-if-no-acl-found = yes
	replica-principal = User:CN=broker-{id}
	broker-id = 3
	CONF
	KAFKA_PORT=$(free_port)
	KAFKA="127.0.0.1:$KAFKA_PORT"
	start_broker -c "$TMP/serve.conf" --topic t:1 \
		--kafka-listen "SSL://$KAFKA" --ssl-cert "$TMP/pki/server.pem" \
		--ssl-key "$TMP/pki/server.key" --ssl-ca "$TMP/pki/ca.pem" \
		--ssl-client-auth required
	wait_port "$KAFKA_PORT" 5
	# No ACL names "free": everyone; "t" is named: ANONYMOUS is not
	# allowed, the super user is.
	echo one | klog-produce -t free
	run -77 klog-consume -t t -o beginning -e
	echo two | as admin -q -P -t t
	run -0 as alice -q -C -t t -o beginning -e
	[ "$output" = two ]
}

@test "acls: a SCRAM login is the principal User:NAME the ACLs decide by" {
	printf 'alice-secret' | klog-group --users "$TMP/users" users add \
		--mechanism SCRAM-SHA-256 alice >/dev/null
	acls add --allow-principal User:alice --operation write --topic t \
		>/dev/null
	KAFKA_PORT=$(free_port)
	KAFKA="127.0.0.1:$KAFKA_PORT"
	start_broker --kafka-listen "SASL_SSL://$KAFKA" --users "$TMP/users" \
		--ssl-cert "$TMP/pki/server.pem" --ssl-key "$TMP/pki/server.key" \
		--acls "$ACLS" --topic t:1
	wait_port "$KAFKA_PORT" 5
	scram() {
		timeout 20 kcat -b "$KAFKA" -X security.protocol=sasl_ssl \
			-X ssl.ca.location="$TMP/pki/ca.pem" \
			-X sasl.mechanisms=SCRAM-SHA-256 -X sasl.username=alice \
			-X sasl.password=alice-secret "$@"
	}
	echo one | scram -q -P -t t
	# WRITE implies DESCRIBE: the Metadata passes, the Fetch is refused.
	run -1 scram -C -t t -o beginning -e
	[[ $output == *"Topic t [0] error: Fetch from broker 0 failed: Broker: Topic authorization failed"* ]]
	grep -q 'ACLs: User:alice from 127.0.0.1 denied READ on TOPIC t' \
		"$TMP/broker.log"
	# The password is in no log line.
	! grep -q alice-secret "$TMP/broker.log"
	acls add --allow-principal User:alice --operation read --topic t \
		>/dev/null
	wait_log "ACLs: $ACLS: 2 ACLs in force" 2
	run -0 scram -q -C -t t -o beginning -e
	[ "$output" = one ]
}
