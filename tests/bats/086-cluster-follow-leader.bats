#!/usr/bin/env bats
# klog-produce -Z and klog-consume -Z on a replicated topic whose
# /klog/topics nodes are written by hand: records go to each partition's
# leader, a new leader is followed, a partition without a leader is waited
# for within --retry-for, then given up with 69.  The brokers are plain
# cluster brokers holding the topic's directories (stand-ins until the
# brokers replicate); the leader nodes are persistent here.

bats_require_minimum_version 1.5.0
load helpers

ZKS=2000

setup_file() {
	start_zk
}

teardown_file() {
	stop_zk
}

setup() {
	common_setup
	unset KLOG_ZOOKEEPER KLOG_BROKERS
	ZKC="$ZK/follow$BATS_TEST_NUMBER"
	ROOT="/follow$BATS_TEST_NUMBER"
}

teardown() {
	common_teardown
}

# count ID PART: records of partition PART of rt on broker ID.
count() {
	klog-consume -b "127.0.0.1:${BROKER_PORTS[$1]}" -t rt -p "$2" \
		-o beginning -e | wc -l
}

# zk_set PATH DATA: change a node under this test's chroot.
zk_set() {
	printf "set %s '%s'\n" "$ROOT$1" "$2" |
		/usr/share/zookeeper/bin/zkCli.sh -server "$ZK" >/dev/null 2>&1
}

@test "follow: records go to each partition's leader; a new leader is followed; no leader is 69" {
	start_zk_broker 1 --zk-session-timeout $ZKS --topic rt:2
	start_zk_broker 2 --zk-session-timeout $ZKS --topic rt:2
	sed "s|^|$ROOT|" <<-EOF | zk_nodes "$ZK"
	/klog/topics/rt {"version":1,"partitions":{"0":[1,2],"1":[2,1]},"min_insync":1}
	/klog/topics/rt/partitions/0/leader 1
	/klog/topics/rt/partitions/1/leader 2
	EOF
	seq 1 100 | klog-produce -Z "$ZKC" -t rt --batch 10
	[ "$(count 1 0)" -gt 0 ]
	[ "$(count 2 1)" -gt 0 ]
	[ "$(count 1 1)" -eq 0 ]
	[ "$(count 2 0)" -eq 0 ]
	[ $(( $(count 1 0) + $(count 2 1) )) -eq 100 ]
	# Partition numbers, not (broker, partition) pairs.
	run -0 klog-consume -Z "$ZKC" -L -t rt
	[ "${#lines[@]}" -eq 2 ]
	run -0 klog-consume -Z "$ZKC" -t rt -o beginning -e
	[ "${#lines[@]}" -eq 100 ]
	# Broker 2 leads partition 0 now.
	zk_set /klog/topics/rt/partitions/0/leader 2
	seq 101 200 | klog-produce -Z "$ZKC" -t rt -p 0
	[ "$(count 2 0)" -eq 100 ]
	run -0 klog-consume -Z "$ZKC" -t rt -p 0 -o beginning -e
	[ "${lines[0]}" = 101 ]
	# No leader (an election that never ends): waited for, then 69.
	printf "delete %s\n" "$ROOT/klog/topics/rt/partitions/0/leader" |
		/usr/share/zookeeper/bin/zkCli.sh -server "$ZK" >/dev/null 2>&1
	run -69 klog-produce -Z "$ZKC" -t rt -p 0 --retry-for 1s <<<x
	[[ $output == *'topic "rt" partition 0: no leader'* ]]
	run -69 klog-consume -Z "$ZKC" -t rt -p 0 -o beginning -e --retry-for 1s
	[[ $output == *'partition 0: no leader'* ]]
	# Partition 1 is unaffected.
	run -0 klog-produce -Z "$ZKC" -t rt -p 1 --retry-for 1s <<<y
}
