#!/usr/bin/env bats
# Kafka's ACLs in ZooKeeper (issue 28; klog-group(1) acls, klog-security(7)):
# klog-group -Z --zk-auth-file acls add|remove|list writes the nodes
# Kafka's AclAuthorizer reads (/kafka-acl/<Type>/<name>,
# /kafka-acl-extended/prefixed/<Type>/<name>, its JSON and words), read
# here with ZooKeeper's own CLI; anyone reads them, only the identity
# writes; a node Kafka wrote is read, its entries klog has no word for
# kept by an edit; a node that is not Kafka's is refused by name.  One
# ZooKeeper, a chroot per test.

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
	/kafka-acl/Topic/orders {"version": 1, "acls": [ {"host":"*", "permissionType": "Deny", "operation": "Read", "principal": "User:alice"}, {"host":"*", "permissionType": "Allow", "operation": "DescribeConfigs", "principal": "User:ops"}, {"host":"*", "permissionType": "Allow", "operation": "Read", "principal": "Group:readers"} ] }
	EOF
	run -0 klog-group -Z "$ZKC" -H -J acls list
	[ "$output" = '{"resource_type":"TOPIC","name":"orders","pattern_type":"LITERAL","principal":"User:alice","host":"*","operation":"READ","permission_type":"DENY"}' ]
	acls add --allow-principal User:bob --operation Write -t orders
	run -0 zkcli get /kafka-acl/Topic/orders
	[[ $output == *'"principal":"User:ops","permissionType":"Allow","operation":"DescribeConfigs","host":"*"'* ]]
	[[ $output == *'"principal":"Group:readers","permissionType":"Allow","operation":"Read","host":"*"'* ]]
	[[ $output == *'"principal":"User:bob","permissionType":"Allow","operation":"Write","host":"*"'* ]]
	# Removing every ACL klog knows there keeps the node for the others.
	acls remove -f -t orders
	run -0 zkcli get /kafka-acl/Topic/orders
	[[ $output == *'"operation":"DescribeConfigs"'* ]]
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
