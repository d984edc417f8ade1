#!/usr/bin/env bats
# ZooKeeper connect strings as klog tools take them (lib/zk/zk.c through
# klog-group): chroots, several hosts, an unreachable ensemble.

load helpers

setup_file() {
	start_zk
}

teardown_file() {
	stop_zk
}

setup() {
	common_setup
	unset KLOG_ZOOKEEPER
}

teardown() {
	common_teardown
}

@test "zk: a missing chroot is created, and isolates its layout" {
	root="$ZK/deep/er/root$BATS_TEST_NUMBER"
	run klog-group -Z "$root" -H brokers
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	# zkCli.sh cannot work under a chroot that does not exist.
	zk_nodes "$root" <<-EOF
	/brokers/ids/5 h-1:10.0.0.5:9092
	EOF
	run klog-group -Z "$root" -H brokers
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf '5\t10.0.0.5\t9092')" ]
	run klog-group -Z "$ZK" -H brokers
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "zk: a dead host in the list is skipped" {
	dead=$(free_port)
	run klog-group -Z "127.0.0.1:$dead,$ZK" -T 5s list
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$(printf 'GROUP\tMEMBERS')" ]
}

@test "zk: KLOG_ZOOKEEPER is used when -Z is not given, and -Z wins" {
	KLOG_ZOOKEEPER="$ZK" run klog-group list
	[ "$status" -eq 0 ]
	KLOG_ZOOKEEPER="127.0.0.1:$(free_port)" run klog-group -Z "$ZK" list
	[ "$status" -eq 0 ]
}

@test "zk: malformed connect strings are usage errors" {
	for bad in "127.0.0.1" ":2181" "127.0.0.1:" "h:21x" "$ZK," "$ZK/" \
	    "$ZK/a//b" "/chroot"; do
		run klog-group -Z "$bad" list
		[ "$status" -eq 64 ]
	done
}

@test "zk: a stopped server is unavailable (69) within the timeout" {
	start_zk	# a server of this test's own
	KLOG_ZOOKEEPER="$ZK" run klog-group list
	[ "$status" -eq 0 ]
	stop_zk
	KLOG_ZOOKEEPER="$ZK" run klog-group -T 1500ms list
	[ "$status" -eq 69 ]
	[[ $output == *"not connected in time"* ]]
}
