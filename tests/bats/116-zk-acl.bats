#!/usr/bin/env bats
# ZooKeeper digest authentication and znode ACLs, as Kafka's
# zookeeper.set.acl (issue 28; klog-security(7), ZooKeeper): with
# --zk-auth-file, what klog creates is read by anyone but changed only by
# its identity; ZooKeeper's own CLI without it is refused (NoAuth), so is
# klog-group, exit 77; /consumers stays open; a replicated cluster with the
# identity survives a leader's kill -9.  One ZooKeeper for the file (a
# second one for the refused digest), a chroot per test.

bats_require_minimum_version 1.5.0
load helpers
load replication

ZKCLI=/usr/share/zookeeper/bin/zkCli.sh
SECRET=s3cret-$$

setup_file() {
	start_zk
}

teardown_file() {
	stop_zk
}

setup() {
	common_setup
	unset KLOG_ZOOKEEPER KLOG_BROKERS
	ZKC="$ZK/acl$BATS_TEST_NUMBER"
	AUTH="$TMP/zk-auth"
	(umask 077 && printf 'klog:%s\n' "$SECRET" >"$AUTH")
	REP_WAIT=30
}

teardown() {
	rep_teardown
	common_teardown
}

# zkcli CMD...: one command of ZooKeeper's own CLI, without any identity,
# under the test's chroot; its output without the JVM's chatter.
zkcli() {
	"$ZKCLI" -server "$ZKC" "$@" 2>&1 |
		grep -v '^SLF4J\|^$\|^WATCHER\|^WatchedEvent\|^Connecting'
	return "${PIPESTATUS[0]}"
}

# secured_topic TOPIC: broker 1 with the identity, TOPIC (1 partition,
# replication factor 1) created with it and led.
secured_topic() {
	start_zk_broker 1 --zk-auth-file "$AUTH"
	klog-group -Z "$ZKC" --zk-auth-file "$AUTH" create-topic -t "$1" \
		--partitions 1 --replication-factor 1 >/dev/null
	rep_wait "$REP_WAIT" rep_leader "$1" 0 >/dev/null
}

@test "--zk-auth-file: refused when others may read it, malformed or missing (1), or without -Z (64); the secret never shown" {
	chmod 644 "$AUTH"
	for t in klog-group klog-produce klog-consume; do
		case $t in
		klog-group) args=(brokers) ;;
		*) args=(-t x) ;;
		esac
		run -1 "$t" -Z "$ZKC" --zk-auth-file "$AUTH" "${args[@]}" </dev/null
		[[ $output == *"--zk-auth-file $AUTH: others may read or write it (mode 0644)"* ]]
		[[ $output != *"$SECRET"* ]]
	done
	run -1 klog-serve -Z "$ZKC" --zk-auth-file "$AUTH" -d "$TMP/d" \
		-l 127.0.0.1:0
	[[ $output == *"others may read or write it"* ]]
	[ ! -e "$TMP/d" ]	# refused before anything was opened
	rm -f "$AUTH"
	(umask 077 && printf 'klog%s\n' "$SECRET" >"$AUTH")
	run -1 klog-group -Z "$ZKC" --zk-auth-file "$AUTH" brokers
	[[ $output == *"$AUTH: no ':' (want user:password)"* ]]
	[[ $output != *"$SECRET"* ]]
	(umask 077 && printf 'klog:\n' >"$AUTH")
	run -1 klog-group -Z "$ZKC" --zk-auth-file "$AUTH" brokers
	[[ $output == *"an empty password"* ]]
	run -1 klog-group -Z "$ZKC" --zk-auth-file "$TMP/none" brokers
	[[ $output == *"$TMP/none: No such file or directory"* ]]
	run -64 klog-produce -b 127.0.0.1:1 --zk-auth-file "$AUTH" -t x </dev/null
	[[ $output == *"--zk-auth-file needs -Z"* ]]
	run -64 klog-serve --zk-auth-file "$AUTH" -d "$TMP/d" -l 127.0.0.1:0
	[[ $output == *"--zk-auth-file needs -Z"* ]]
}

@test "klog-serve -Z without an identity warns once that its nodes are world-writable; with one it does not, and its nodes carry the ACL" {
	start_zk_broker 1
	[ "$(grep -c 'world-writable' "$TMP/broker-1.log")" -eq 1 ]
	run -0 zkcli getAcl /brokers/ids/1
	[[ $output == *"'world,'anyone"*": cdrwa"* ]]
	ZKC="$ZK/acl${BATS_TEST_NUMBER}b"
	start_zk_broker 2 --zk-auth-file "$AUTH"
	[ "$(grep -c 'world-writable' "$TMP/broker-2.log")" -eq 0 ]
	# The identity all, anyone read (the CLI hides the password's
	# hash: "klog:x"); /consumers open; /config/users the identity's
	# alone (not even its ACL can be read without it).
	for n in /brokers/ids/2 /brokers/ids /brokers/topics /klog/topics \
	    /klog/kafka/brokers /admin/delete_topics; do
		run -0 zkcli getAcl "$n"
		[ "${lines[0]}" = "'digest,'klog:x" ]
		[ "${lines[1]}" = ": cdrwa" ]
		[ "${lines[2]}" = "'world,'anyone" ]
		[ "${lines[3]}" = ": r" ]
	done
	run -0 zkcli getAcl /consumers
	[ "${lines[0]}" = "'world,'anyone" ] && [ "${lines[1]}" = ": cdrwa" ]
	run zkcli getAcl /config/users
	[[ $output == *"Insufficient permission : /config/users"* ]]
	# A broker left without the identity cannot join that cluster.
	run -77 klog-serve -Z "$ZKC" --broker-id 3 -l 127.0.0.1:0 \
		-d "$TMP/broker-3"
	[[ $output == *"klog-serve: /brokers/ids/3: not authorized: the node's ACL wants another ZooKeeper identity"* ]]
	# One given the identity where broker 1 made roots without it says
	# which stay open; not those it makes itself, nor /consumers, open
	# by design.
	ZKC="$ZK/acl$BATS_TEST_NUMBER"
	start_zk_broker 4 --zk-auth-file "$AUTH"
	grep -q 'zookeeper: /brokers/ids was made without a digest identity and anyone may still change it' "$TMP/broker-4.log"
	grep -q 'zookeeper: /admin/delete_topics was made without' "$TMP/broker-4.log"
	run -1 grep -q 'zookeeper: /brokers/topics was made' "$TMP/broker-4.log"
	run -1 grep -q 'zookeeper: /consumers was made' "$TMP/broker-4.log"
}

@test "with the identity, ZooKeeper's CLI without it reads a topic's leader and ISR but cannot set them or delete the topic's nodes" {
	secured_topic t
	run -0 zkcli get /klog/topics/t/partitions/0/state
	[[ $output == *'"isr":[1]'*'"leader":1'* ]]
	run -1 zkcli set /klog/topics/t/partitions/0/state \
		'{"version":1,"isr":[9],"leader":9,"leader_epoch":9}'
	[[ $output == *"Insufficient permission : /klog/topics/t/partitions/0/state"* ]]
	run -1 zkcli delete /klog/topics/t/partitions/0/state
	[[ $output == *"Insufficient permission"* ]]
	run -1 zkcli create /klog/topics/t/partitions/1 ''
	[[ $output == *"Insufficient permission"* ]]
	run -1 zkcli create /admin/delete_topics/t ''
	[[ $output == *"Insufficient permission"* ]]
	run -1 zkcli delete /brokers/ids/1
	[[ $output == *"Insufficient permission"* ]]
	# deleteall says nothing, and deletes nothing.
	zkcli deleteall /klog/topics/t || :
	run -0 zkcli get /klog/topics/t/partitions/0/state
	[[ $output == *'"isr":[1]'*'"leader":1'* ]]
	run -0 klog-group -Z "$ZKC" -H topics -t t
	[ "$output" = "t	0	1	1	1	1" ]
	# With the identity, the CLI may.
	run -0 "$ZKCLI" -server "$ZKC" <<<"addauth digest klog:$SECRET
get /klog/topics/t/partitions/0/state"
	[[ $output == *'"leader":1'* ]]
}

@test "klog-group -Z create-topic and delete-topic: without the identity, or with another password, exit 77 naming the node; with it they work" {
	secured_topic t
	run -77 klog-group -Z "$ZKC" delete-topic -t t
	[ "$output" = "klog-group: /admin/delete_topics/t: not authorized: the node's ACL wants another ZooKeeper identity (klog's digest, --zk-auth-file)" ]
	(umask 077 && printf 'klog:wrong\n' >"$TMP/wrong")
	run -77 klog-group -Z "$ZKC" --zk-auth-file "$TMP/wrong" delete-topic -t t
	[[ $output == *"/admin/delete_topics/t: not authorized"* ]]
	run -77 klog-group -Z "$ZKC" create-topic -t u --partitions 1 \
		--replication-factor 1
	[[ $output == *"/klog/topics"*": not authorized"* ]]
	run -77 klog-group -Z "$ZKC" alter-topic -t t --partitions 2
	[[ $output == *"not authorized"* ]]
	# Nothing was marked, and the topic is served.
	run -0 klog-group -Z "$ZKC" -H topics -t t
	[ "${#lines[@]}" -eq 1 ]
	echo hello | klog-produce -Z "$ZKC" -t t -a all
	run -0 klog-consume -Z "$ZKC" -t t -o beginning -e
	[ "$output" = hello ]
	run -0 klog-group -Z "$ZKC" --zk-auth-file "$AUTH" delete-topic -t t
	run -1 klog-group -Z "$ZKC" topics -t t
	[ -z "$(ls -d "$TMP"/broker-1/t-* 2>/dev/null)" ]
}

@test "with the identity on the brokers, consumer groups need none: members, commits, describe and reset" {
	secured_topic t
	seq 1 100 | klog-produce -Z "$ZKC" -t t -a all
	run -0 klog-consume -Z "$ZKC" -G g -t t -o beginning -e
	[ "${#lines[@]}" -eq 100 ]
	run -0 klog-group -Z "$ZKC" -H describe -g g
	[[ ${lines[0]} == "g	t	0	"* ]]
	run -0 klog-group -Z "$ZKC" reset -g g -t t --to-earliest --execute
	run -0 klog-consume -Z "$ZKC" -G g -t t -e
	[ "${#lines[@]}" -eq 100 ]
	run -0 zkcli getAcl /consumers/g/offsets/t
	[ "${lines[0]}" = "'world,'anyone" ] && [ "${lines[1]}" = ": cdrwa" ]
	run -0 klog-group -Z "$ZKC" delete -g g
}

@test "klog-serve -c: the key zk-auth-file as the flag" {
	printf 'zookeeper = %s\nzk-auth-file = %s\nbroker-id = 1\n' "$ZKC" \
		"$AUTH" >"$TMP/serve.conf"
	klog-serve -c "$TMP/serve.conf" -l 127.0.0.1:0 -d "$TMP/b1" \
		2>"$TMP/b1.log" &
	PIDS+=("$!")
	rep_wait "$REP_WAIT" rep_registered 1
	run -1 grep -q world-writable "$TMP/b1.log"
	run -0 zkcli getAcl /brokers/ids/1
	[[ ${lines[0]} == "'digest,'klog:"* ]]
	run -1 zkcli delete /brokers/ids/1
	[[ $output == *"Insufficient permission"* ]]
}

@test "a ZooKeeper that refuses the digest: klog-group and klog-serve exit 77, the secret never shown" {
	local keep=("$ZK" "$ZK_PORT" "$ZK_PID" "$ZK_DIR")
	export SERVER_JVMFLAGS=-Dzookeeper.DigestAuthenticationProvider.enabled=false
	start_zk
	unset SERVER_JVMFLAGS
	run -77 klog-group -Z "$ZK" --zk-auth-file "$AUTH" brokers
	[[ $output == *"zookeeper $ZK: digest authentication failed"* ]]
	[[ $output != *"$SECRET"* ]]
	run -77 klog-serve -Z "$ZK" --zk-auth-file "$AUTH" --broker-id 1 \
		-d "$TMP/b1" -l 127.0.0.1:0
	[[ $output == *"digest authentication failed"* ]]
	# Without an identity, the same server serves as ever.
	run -0 klog-group -Z "$ZK" brokers
	stop_zk
	ZK=${keep[0]} ZK_PORT=${keep[1]} ZK_PID=${keep[2]} ZK_DIR=${keep[3]}
}

@test "a replicated cluster with the identity: acks=all producers and a consumer through the leader's kill -9, every record kept" {
	local l
	REP_BROKER_OPTS="--zk-auth-file $AUTH"
	rep_cluster
	klog-group -Z "$ZKC" --zk-auth-file "$AUTH" create-topic -t orders \
		--partitions 2 --replication-factor 3 --min-insync-replicas 2
	REP_NPART=2
	rep_wait_full orders 2
	rep_produce_start orders 2 20
	rep_consume_start orders
	rep_wait_progress 0 10
	rep_wait_progress 1 10
	l=$(rep_leader orders 0)
	rep_kill "$l"
	rep_wait_new_leader orders 0 "$l"
	rep_wait_progress 0 20
	# The new leader wrote its state with the identity.
	run -0 zkcli getAcl /klog/topics/orders/partitions/0/state
	[[ ${lines[0]} == "'digest,'klog:"* ]]
	rep_restart "$l"
	rep_wait_full orders 2
	rep_wait_progress 0 10
	run -1 grep -q 'not authorized' "$TMP"/broker-*.log
	rep_check orders
}

# kafka_cred JSON MECH PASSWORD: whether the node's credential of MECH is
# Kafka's text for PASSWORD (ScramCredentialUtils, RFC 5802's keys).
kafka_cred() {
	/usr/bin/python3 - "$@" <<-'PY'
	import base64, hashlib, hmac, json, re, sys
	node, mech, pw = sys.argv[1], sys.argv[2], sys.argv[3].encode()
	doc = json.loads(node)
	assert doc["version"] == 1, doc
	text = doc["config"][mech]
	m = re.fullmatch(r"salt=([^,]+),stored_key=([^,]+),server_key=([^,]+),"
	                 r"iterations=(\d+)", text)
	salt, stored, server, it = m.group(1), m.group(2), m.group(3), int(m.group(4))
	h = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}[mech]
	salted = hashlib.pbkdf2_hmac(h, pw, base64.b64decode(salt), it)
	ck = hmac.new(salted, b"Client Key", h).digest()
	sk = hmac.new(salted, b"Server Key", h).digest()
	assert base64.b64decode(stored) == hashlib.new(h, ck).digest()
	assert base64.b64decode(server) == sk
	print(it)
	PY
}

@test "users -Z: SCRAM users in /config/users as Kafka keeps them, the identity's alone" {
	local node
	printf 'alice-secret\n' | klog-group -Z "$ZKC" --zk-auth-file "$AUTH" \
		users add alice >"$TMP/out"
	[ "$(cat "$TMP/out")" = "USER	MECHANISM	ITERATIONS
alice	SCRAM-SHA-256	4096
alice	SCRAM-SHA-512	4096" ]
	printf 'bob-secret\n' | klog-group -Z "$ZKC" --zk-auth-file "$AUTH" \
		--mechanism SCRAM-SHA-512 --iterations 8192 users add \
		bob@example.com >/dev/null
	run -0 klog-group -Z "$ZKC" --zk-auth-file "$AUTH" -H users list
	[ "$output" = "alice	SCRAM-SHA-256	4096
alice	SCRAM-SHA-512	4096
bob@example.com	SCRAM-SHA-512	8192" ]
	run -0 klog-group -Z "$ZKC" --zk-auth-file "$AUTH" -J users list bob@example.com
	[ "$output" = '{"user":"bob@example.com","mechanism":"SCRAM-SHA-512","iterations":8192}' ]
	# Kafka's node, name sanitized as its Sanitizer does; keys that
	# Kafka's formulas give for the password.
	node=$("$ZKCLI" -server "$ZKC" <<<"addauth digest klog:$SECRET
get /config/users/alice" 2>/dev/null | grep '^{"version"')
	[ "$(kafka_cred "$node" SCRAM-SHA-256 alice-secret)" = 4096 ]
	[ "$(kafka_cred "$node" SCRAM-SHA-512 alice-secret)" = 4096 ]
	node=$("$ZKCLI" -server "$ZKC" <<<"addauth digest klog:$SECRET
get /config/users/bob%40example.com" 2>/dev/null | grep '^{"version"')
	[ "$(kafka_cred "$node" SCRAM-SHA-512 bob-secret)" = 8192 ]
	# Secrets: no world read, not even of the list.
	run zkcli get /config/users/alice
	[[ $output == *"Insufficient permission : /config/users/alice"* ]]
	run zkcli ls /config/users
	[[ $output == *"Insufficient permission : /config/users"* ]]
	run -0 "$ZKCLI" -server "$ZKC" <<<"addauth digest klog:$SECRET
getAcl /config/users/alice"
	# Seen with the identity, the ACL names its digest: SHA-1 of
	# "user:password", as ZooKeeper's DigestAuthenticationProvider.
	[[ $output == *"'digest,'klog:$(printf 'klog:%s' "$SECRET" |
		openssl dgst -sha1 -binary | base64)"$'\n'": cdrwa"* ]]
	[[ $output != *"'world,'anyone"* ]]
	# Another password is refused, without the identity it is a misuse.
	(umask 077 && printf 'klog:wrong\n' >"$TMP/wrong")
	run -77 klog-group -Z "$ZKC" --zk-auth-file "$TMP/wrong" users list
	[[ $output == *"/config/users: not authorized"* ]]
	run -64 klog-group -Z "$ZKC" users list
	# Remove one mechanism, then the user: its node goes.
	run -0 klog-group -Z "$ZKC" --zk-auth-file "$AUTH" -H \
		--mechanism SCRAM-SHA-256 users remove alice
	[ "$output" = "alice	SCRAM-SHA-256	4096" ]
	run -1 klog-group -Z "$ZKC" --zk-auth-file "$AUTH" \
		--mechanism SCRAM-SHA-256 users remove alice
	[ "$output" = 'klog-group: user "alice": no such credential' ]
	run -0 klog-group -Z "$ZKC" --zk-auth-file "$AUTH" users remove alice
	run -1 klog-group -Z "$ZKC" --zk-auth-file "$AUTH" users list alice
	[ "$output" = 'klog-group: user "alice": no such user' ]
	run -0 "$ZKCLI" -server "$ZKC" <<<"addauth digest klog:$SECRET
ls /config/users"
	[[ $output == *"[bob%40example.com]"* ]]
}

@test "a cluster broker logs SASL users in from /config/users, and takes a user added or removed there without a restart" {
	local kp log=$TMP/broker-1.log
	printf 'alice-secret\n' | klog-group -Z "$ZKC" --zk-auth-file "$AUTH" \
		users add alice >/dev/null
	kp=$(free_port)
	start_zk_broker 1 --zk-auth-file "$AUTH" \
		--kafka-listen "SASL_PLAINTEXT://127.0.0.1:$kp"
	wait_port "$kp" 5
	grep -q 'users: 2 credentials from ZooKeeper' "$log"
	ksp() {
		timeout 20 kcat -b "127.0.0.1:$kp" -X security.protocol=sasl_plaintext \
			-X sasl.mechanisms=SCRAM-SHA-512 -X sasl.username="$1" \
			-X sasl.password="$2" -L -m 3 2>&1
	}
	run -0 ksp alice alice-secret
	run ! ksp bob bob-secret
	[[ $output == *"SASL authentication error"* ]]
	printf 'bob-secret\n' | klog-group -Z "$ZKC" --zk-auth-file "$AUTH" \
		users add bob >/dev/null
	local n=50
	until ksp bob bob-secret >/dev/null; do
		n=$((n - 1)); [ "$n" -gt 0 ]; sleep 0.1
	done
	klog-group -Z "$ZKC" --zk-auth-file "$AUTH" users remove alice \
		>/dev/null
	n=50
	while ksp alice alice-secret >/dev/null; do
		n=$((n - 1)); [ "$n" -gt 0 ]; sleep 0.1
	done
	grep -q 'users: 2 credentials from ZooKeeper' "$log"
	# Without an identity the users cannot be read: no SASL from them.
	run -64 klog-serve -Z "$ZKC" --broker-id 2 -l 127.0.0.1:0 \
		-d "$TMP/b2" --kafka-listen "SASL_PLAINTEXT://127.0.0.1:0"
	[[ $output == *"--zk-auth-file for ZooKeeper's /config/users"* ]]
}

@test "a broker whose identity may not read /config/users exits 77, saying so in one clear line" {
	# Roots made open by a broker without an identity, the users secret
	# to this test's identity: another identity gets as far as reading
	# them.
	start_zk_broker 9
	kill "${BROKER_PIDS[9]}"
	wait "${BROKER_PIDS[9]}" 2>/dev/null || :
	printf 'alice-secret\n' | klog-group -Z "$ZKC" --zk-auth-file "$AUTH" \
		users add alice >/dev/null
	(umask 077 && printf 'other:%s\n' "$SECRET" >"$TMP/other-auth")
	run -77 klog-serve -Z "$ZKC" --broker-id 1 -l 127.0.0.1:0 \
		-d "$TMP/b1" --zk-auth-file "$TMP/other-auth" \
		--kafka-listen "SASL_PLAINTEXT://127.0.0.1:0"
	[[ $output == *"klog-serve: users in ZooKeeper: /config/users: not authorized"* ]]
}
