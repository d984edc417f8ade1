#!/usr/bin/env bats
# Kafka's ACLs in ZooKeeper (issue 28; klog-group(1) acls, klog-security(7)):
# klog-group -Z --zk-auth-file acls add|remove|list writes the nodes
# Kafka's AclAuthorizer reads (/kafka-acl/<Type>/<name>,
# /kafka-acl-extended/prefixed/<Type>/<name>, its JSON and words), read
# here with ZooKeeper's own CLI; anyone reads them, only the identity
# writes; a node Kafka wrote is read, its entries klog has no word for
# kept by an edit; a node that is not Kafka's is refused by name.  A
# cluster broker with --zk-acls decides by them: kcat (SCRAM users from
# /config/users) is refused, then allowed, then refused again as
# klog-group -Z changes the ACLs, without a restart.  One ZooKeeper, a
# chroot per test.

bats_require_minimum_version 1.5.0
load helpers

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
	ZKC="$ZK/acls$BATS_TEST_NUMBER"
	AUTH="$TMP/zk-auth"
	(umask 077 && printf 'klog:%s\n' "$SECRET" >"$AUTH")
}

teardown() {
	common_teardown
}

# zkcli CMD...: one command of ZooKeeper's own CLI, without any identity,
# under the test's chroot; its output without the JVM's chatter.
zkcli() {
	"$ZKCLI" -server "$ZKC" "$@" 2>&1 |
		grep -v '^SLF4J\|^$\|^WATCHER\|^WatchedEvent\|^Connecting'
	return "${PIPESTATUS[0]}"
}

acls() {
	klog-group -Z "$ZKC" --zk-auth-file "$AUTH" acls "$@"
}

@test "acls -Z: add, list and remove; the nodes are Kafka's, read by anyone, written by the identity alone" {
	local T=$'\t'
	acls add --allow-principal User:alice --operation Read \
		--operation write -t clicks
	acls add --deny-principal 'User:*' --operation Describe -g app- \
		--prefixed
	acls add --allow-principal 'User:CN=broker-1,O=klog' \
		--operation ClusterAction --cluster
	# Again: nothing changes.
	acls add --allow-principal User:alice --operation READ -t clicks
	# Listed as kafka-acls --list prints them, without the identity too.
	run -0 klog-group -Z "$ZKC" acls list
	[ "$output" = "Current ACLs for resource \`ResourcePattern(resourceType=TOPIC, name=clicks, patternType=LITERAL)\`:
$T(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)
$T(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)

Current ACLs for resource \`ResourcePattern(resourceType=GROUP, name=app-, patternType=PREFIXED)\`:
$T(principal=User:*, host=*, operation=DESCRIBE, permissionType=DENY)

Current ACLs for resource \`ResourcePattern(resourceType=CLUSTER, name=kafka-cluster, patternType=LITERAL)\`:
$T(principal=User:CN=broker-1,O=klog, host=*, operation=CLUSTER_ACTION, permissionType=ALLOW)" ]
	run -0 klog-group -Z "$ZKC" -J acls list -g app- --prefixed
	[ "$output" = '{"resource_type":"GROUP","name":"app-","pattern_type":"PREFIXED","principal":"User:*","host":"*","operation":"DESCRIBE","permission_type":"DENY"}' ]
	# Kafka's paths, JSON and words.
	run -0 zkcli get /kafka-acl/Topic/clicks
	[[ $output == *'{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"},{"principal":"User:alice","permissionType":"Allow","operation":"Write","host":"*"}]}'* ]]
	run -0 zkcli get /kafka-acl-extended/prefixed/Group/app-
	[[ $output == *'{"version":1,"acls":[{"principal":"User:*","permissionType":"Deny","operation":"Describe","host":"*"}]}'* ]]
	run -0 zkcli get /kafka-acl/Cluster/kafka-cluster
	[[ $output == *'"principal":"User:CN=broker-1,O=klog","permissionType":"Allow","operation":"ClusterAction"'* ]]
	# Anyone reads; the identity alone writes (the CLI hides the
	# password's hash: "klog:x").
	for n in /kafka-acl /kafka-acl/Topic /kafka-acl/Topic/clicks \
	    /kafka-acl-extended/prefixed/Group; do
		run -0 zkcli getAcl "$n"
		[ "${lines[0]}" = "'digest,'klog:x" ]
		[ "${lines[1]}" = ": cdrwa" ]
		[ "${lines[2]}" = "'world,'anyone" ]
		[ "${lines[3]}" = ": r" ]
	done
	run zkcli set /kafka-acl/Topic/clicks '{"version":1,"acls":[]}'
	[[ $output == *"Insufficient permission : /kafka-acl/Topic/clicks"* ]]
	run zkcli create /kafka-acl/Topic/other '{"version":1,"acls":[]}'
	[[ $output == *"Insufficient permission : /kafka-acl/Topic"* ]]
	# Remove one, then the rest of a resource: its node goes.
	acls remove --allow-principal User:alice --operation Write -t clicks
	run -0 klog-group -Z "$ZKC" -H -J acls list -t clicks
	[ "$output" = '{"resource_type":"TOPIC","name":"clicks","pattern_type":"LITERAL","principal":"User:alice","host":"*","operation":"READ","permission_type":"ALLOW"}' ]
	acls remove -f -g app- --prefixed
	run -0 zkcli ls /kafka-acl-extended/prefixed/Group
	[[ $output == *"[]"* ]]
	run -1 --separate-stderr acls remove -f -g app- --prefixed
	[ "$stderr" = "klog-group: acls remove: no ACL matches; nothing removed" ]
}

@test "acls -Z: a node Kafka wrote is read, the entries klog has no word for kept by an edit; a node that is not Kafka's is refused by name" {
	# Kafka's own example (AclEntry.scala) beside an operation klog never
	# checks and a principal of another type.
	klog-group -Z "$ZKC" acls list	# (klog makes the chroot)
	zk_nodes "$ZKC" <<-'EOF'
	/kafka-acl/Topic/orders {"version": 1, "acls": [ {"host":"*", "permissionType": "Deny", "operation": "Read", "principal": "User:alice"}, {"host":"*", "permissionType": "Allow", "operation": "AlterConfigs", "principal": "User:ops"}, {"host":"*", "permissionType": "Allow", "operation": "Read", "principal": "Group:readers"} ] }
	EOF
	run -0 klog-group -Z "$ZKC" -H -J acls list
	[ "$output" = '{"resource_type":"TOPIC","name":"orders","pattern_type":"LITERAL","principal":"User:alice","host":"*","operation":"READ","permission_type":"DENY"}' ]
	acls add --allow-principal User:bob --operation Write -t orders
	run -0 zkcli get /kafka-acl/Topic/orders
	[[ $output == *'"principal":"User:ops","permissionType":"Allow","operation":"AlterConfigs","host":"*"'* ]]
	[[ $output == *'"principal":"Group:readers","permissionType":"Allow","operation":"Read","host":"*"'* ]]
	[[ $output == *'"principal":"User:bob","permissionType":"Allow","operation":"Write","host":"*"'* ]]
	# Removing every ACL klog knows there keeps the node for the others.
	acls remove -f -t orders
	run -0 zkcli get /kafka-acl/Topic/orders
	[[ $output == *'"operation":"AlterConfigs"'* ]]
	[[ $output != *'User:bob'* ]]
	[[ $output != *'User:alice'* ]]
	# Not Kafka's: refused, naming the node and why.
	zk_nodes "$ZKC" <<-'EOF'
	/kafka-acl/Group/g {"version":1,"acls":[{"host":"*","permissionType":"Maybe","operation":"Read","principal":"User:a"}]}
	EOF
	run -65 --separate-stderr klog-group -Z "$ZKC" acls list
	[ "$stderr" = "klog-group: /kafka-acl/Group/g: ACL JSON: permissionType Maybe: want Allow or Deny" ]
}

@test "acls -Z: refusals: writing without the identity (64), with another identity (77), a file and -Z together (64)" {
	run -64 --separate-stderr klog-group -Z "$ZKC" acls add \
		--allow-principal User:a --operation Read -t t
	[ "${stderr_lines[0]}" = "klog-group: acls add -Z needs --zk-auth-file: the ACL nodes are made writable by that identity alone" ]
	run -64 --separate-stderr klog-group -Z "$ZKC" acls remove -f -t t
	[ "${stderr_lines[0]}" = "klog-group: acls remove -Z needs --zk-auth-file: the ACL nodes are made writable by that identity alone" ]
	run -64 --separate-stderr klog-group -Z "$ZKC" --zk-auth-file "$AUTH" \
		--acls "$TMP/acls" acls list
	[ "${stderr_lines[0]}" = "klog-group: acls -Z keeps the ACLs in ZooKeeper: --acls FILE is a standalone broker's" ]
	[ ! -e "$TMP/acls" ]
	acls add --allow-principal User:a --operation Read -t t
	(umask 077 && printf 'klog:wrong\n' >"$TMP/wrong")
	run -77 --separate-stderr klog-group -Z "$ZKC" --zk-auth-file \
		"$TMP/wrong" acls add --allow-principal User:b --operation Read -t t
	[[ $stderr == *"/kafka-acl/Topic/t: not authorized"* ]]
	[[ $stderr != *wrong* ]]
	run -0 klog-group -Z "$ZKC" -H -J acls list
	[ "$output" = '{"resource_type":"TOPIC","name":"t","pattern_type":"LITERAL","principal":"User:a","host":"*","operation":"READ","permission_type":"ALLOW"}' ]
}

# wait_broker_log TEXT COUNT SECONDS: until broker 1's log has COUNT lines
# with TEXT.
wait_broker_log() {
	local n=$(( $3 * 10 ))
	until [ "$(grep -cF -- "$1" "$TMP/broker-1.log")" -ge "$2" ]; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.1
	done
}

# ksp USER PASSWORD KCAT-ARGS...: kcat logged in by SCRAM-SHA-512 on the
# broker's Kafka listener.
ksp() {
	local u=$1 p=$2
	shift 2
	timeout 20 kcat -b "127.0.0.1:$KP" -X security.protocol=sasl_plaintext \
		-X sasl.mechanisms=SCRAM-SHA-512 -X sasl.username="$u" \
		-X sasl.password="$p" "$@"
}

# zk_set PATH DATA: set a node's data as klog's identity, with ZooKeeper's
# own CLI.
zk_set() {
	printf "addauth digest klog:%s\nset %s '%s'\n" "$SECRET" "$1" "$2" |
		"$ZKCLI" -server "$ZKC" >"$TMP/zk_set.out" 2>&1
	! grep -q 'Insufficient\|Exception\|does not exist' "$TMP/zk_set.out"
}

# acl_broker [klog-serve options...]: broker 1 with the identity, a SASL
# Kafka listener on $KP, ACLs from ZooKeeper; users alice and admin.
acl_broker() {
	local u
	for u in alice admin; do
		printf '%s-secret\n' "$u" | klog-group -Z "$ZKC" \
			--zk-auth-file "$AUTH" users add "$u" >/dev/null
	done
	KP=$(free_port)
	start_zk_broker 1 --zk-auth-file "$AUTH" --zk-acls \
		--kafka-listen "SASL_PLAINTEXT://127.0.0.1:$KP" "$@"
	wait_port "$KP" 5
}

@test "a cluster broker with --zk-acls refuses kcat until klog-group -Z acls add allows it, and again once removed, without a restart" {
	local pid
	local n=100
	acl_broker --super-users User:admin
	pid=${BROKER_PIDS[1]}
	wait_broker_log 'ACLs: 0 from ZooKeeper in force' 1 5
	# The Kafka listener of a cluster serves its replicated topics.
	klog-group -Z "$ZKC" --zk-auth-file "$AUTH" create-topic -t t \
		--partitions 1 --replication-factor 1 >/dev/null
	until ksp admin admin-secret -L -t t 2>&1 | grep -q 'leader 1,'; do
		n=$((n - 1)); [ "$n" -gt 0 ]; sleep 0.1
	done
	echo one | ksp admin admin-secret -q -P -t t
	run -1 ksp alice alice-secret -C -t t -o beginning -e
	[[ $output == *"Topic t error: Broker: Topic authorization failed"* ]]
	grep -q 'ACLs: User:alice from 127.0.0.1 denied DESCRIBE on TOPIC t' \
		"$TMP/broker-1.log"
	acls add --allow-principal User:alice --operation Read -t t
	wait_broker_log 'ACLs: 1 from ZooKeeper in force' 1 5
	run -0 ksp alice alice-secret -q -C -t t -o beginning -e
	[ "$output" = one ]
	# Read does not give Write.
	run -1 ksp alice alice-secret -P -t t <<<two
	[[ $output == *"Delivery failed for message: Broker: Topic authorization failed"* ]]
	# A prefixed ACL, on a node of its own.
	acls add --allow-principal User:alice --operation Write -t t --prefixed
	wait_broker_log 'ACLs: 2 from ZooKeeper in force' 1 5
	echo two | ksp alice alice-secret -q -P -t t
	acls remove -f -t t
	acls remove -f -t t --prefixed
	wait_broker_log 'ACLs: 0 from ZooKeeper in force' 2 5
	run -1 ksp alice alice-secret -C -t t -o beginning -e
	[[ $output == *"Topic authorization failed"* ]]
	# The same broker all along.
	[ "${BROKER_PIDS[1]}" = "$pid" ] && kill -0 "$pid"
}

@test "klog-serve --zk-acls: a node that is not Kafka's stops the start (65), and later keeps the ACLs in force; its options' refusals (64)" {
	local n=100
	acls add --allow-principal User:alice --operation Read -t t
	acls add --allow-principal User:alice --operation Read -t t --prefixed
	zk_set /kafka-acl-extended/prefixed/Topic/t '{"version":2,"acls":[]}'
	run -65 klog-serve -Z "$ZKC" --broker-id 1 -l 127.0.0.1:0 \
		-d "$TMP/d" --zk-auth-file "$AUTH" --zk-acls
	[[ $output == *"klog-serve: ACLs in ZooKeeper: /kafka-acl-extended/prefixed/Topic/t: ACL JSON: version: 2 out of range [1, 1]"* ]]
	zk_set /kafka-acl-extended/prefixed/Topic/t '{"version":1,"acls":[]}'
	acl_broker --super-users User:admin
	wait_broker_log 'ACLs: 1 from ZooKeeper in force' 1 5
	klog-group -Z "$ZKC" --zk-auth-file "$AUTH" create-topic -t t \
		--partitions 1 --replication-factor 1 >/dev/null
	until echo one | ksp admin admin-secret -q -P -t t 2>/dev/null; do
		n=$((n - 1)); [ "$n" -gt 0 ]; sleep 0.1
	done
	run -0 ksp alice alice-secret -q -C -t t -o beginning -e
	[ "$output" = one ]
	# A node spoiled while it runs: said, the ACL in force kept; mended,
	# taken up.
	zk_set /kafka-acl-extended/prefixed/Topic/t '{"version":1}'
	wait_broker_log "ACLs: reading ZooKeeper's: /kafka-acl-extended/prefixed/Topic/t: ACL JSON: no acls (keeping the 1 ACLs in force)" 1 5
	run -0 ksp alice alice-secret -q -C -t t -o beginning -e
	[ "$output" = one ]
	zk_set /kafka-acl-extended/prefixed/Topic/t '{"version":1,"acls":[{"principal":"User:alice","permissionType":"Deny","operation":"Read","host":"*"}]}'
	wait_broker_log 'ACLs: 2 from ZooKeeper in force' 1 5
	run -1 ksp alice alice-secret -C -t t -o beginning -e
	[[ $output == *"Topic authorization failed"* ]]

	run -64 klog-serve -Z "$ZKC" --broker-id 2 -l 127.0.0.1:0 \
		-d "$TMP/d2" --zk-acls
	[[ $output == *"--zk-acls needs --zk-auth-file: without an identity anyone who reaches ZooKeeper could write the ACLs"* ]]
	run -64 klog-serve -l 127.0.0.1:0 -d "$TMP/d2" --zk-acls
	[[ $output == *"--zk-acls needs -Z"* ]]
	# The same as a config-file key.
	printf 'zk-acls = yes\n' >"$TMP/conf"
	run -64 klog-serve -c "$TMP/conf" -l 127.0.0.1:0 -d "$TMP/d2"
	[[ $output == *"--zk-acls needs -Z"* ]]
	printf 'zk-acls = maybe\n' >"$TMP/conf"
	run -64 klog-serve -c "$TMP/conf" -l 127.0.0.1:0 -d "$TMP/d2"
	[[ $output == *"zk-acls maybe"* ]]
	run -64 klog-serve -Z "$ZKC" --broker-id 2 -l 127.0.0.1:0 \
		-d "$TMP/d2" --zk-auth-file "$AUTH" --zk-acls --acls "$TMP/acls"
	[[ $output == *"--zk-acls and --acls cannot be used together"* ]]
	[ ! -e "$TMP/d2" ]
}
