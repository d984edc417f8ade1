#!/usr/bin/env bats
# klog-group -Z alter-topic and delete-topic for replicated topics (issue 15;
# klog-group(1), rtadmin.h): partitions added under running brokers and
# taken up without a restart, a delete that removes every broker's copy
# (one down at the time included), a name made again after it, and the
# refusals with their exit codes.  One ZooKeeper for the file; three
# brokers per test, under a chroot of the test's own, with short sessions.

bats_require_minimum_version 1.5.0
load helpers
load replication

setup_file() {
	start_zk
}

teardown_file() {
	stop_zk
}

setup() {
	common_setup
	unset KLOG_ZOOKEEPER KLOG_BROKERS
	ZKC="$ZK/tadmin$BATS_TEST_NUMBER"
	REP_WAIT=30
}

teardown() {
	rep_teardown
	common_teardown
}

# dirs TOPIC: the partition directories of TOPIC on every broker.
dirs() {
	ls -d "$TMP"/broker-*/"$1"-* 2>/dev/null || :
}

# zk_has PATH: whether the node exists under the test's chroot.
zk_has() {
	/usr/share/zookeeper/bin/zkCli.sh -server "$ZKC" stat "$1" 2>&1 |
		grep -q '^cZxid'
}

gone_everywhere() {
	[ -z "$(dirs "$1")" ] && ! klog-group -Z "$ZKC" topics -t "$1" \
		>/dev/null 2>&1
}

@test "alter-topic -Z: the new partitions are led, replicated and reached by producers and consumers" {
	rep_cluster
	rep_create grow 2
	run -0 klog-group -Z "$ZKC" -H -J alter-topic -t grow --partitions 5
	[ "${#lines[@]}" -eq 5 ]
	# The old partitions as they were, the new ones over all three.
	echo "$output" | jq -e -s '
		([.[].partition] == [0,1,2,3,4]) and
		all(.[]; (.replicas | sort) == [1,2,3]) and
		# Leaders keep going round: partitions 2, 3, 4 start on three
		# different brokers.
		([.[2:][].replicas[0]] | unique | length) == 3'
	# The running brokers elect leaders, and followers join the ISR.
	rep_wait_full grow 5
	[ "$(dirs grow | wc -l)" -eq 15 ]
	for p in 2 3 4; do
		seq 1 50 | sed "s/^/p$p-/" |
			klog-produce -Z "$ZKC" -t grow -p "$p" -a all
	done
	run -0 klog-consume -Z "$ZKC" -t grow -p 4 -o beginning -e
	[ "${#lines[@]}" -eq 50 ] && [ "${lines[0]}" = p4-1 ]
	run -0 klog-consume -Z "$ZKC" -t grow -o beginning -e
	[ "${#lines[@]}" -eq 150 ]
	# Every replica of a new partition has the leader's bytes.
	rep_wait "$REP_WAIT" rep_settled grow
	for p in 2 3 4; do
		sums=$(cat "$TMP"/broker-{1,2,3}/grow-$p/*.klog | wc -c)
		[ "$sums" -gt 0 ]
		cmp "$TMP/broker-1/grow-$p/00000000000000000000.klog" \
			"$TMP/broker-2/grow-$p/00000000000000000000.klog"
		cmp "$TMP/broker-1/grow-$p/00000000000000000000.klog" \
			"$TMP/broker-3/grow-$p/00000000000000000000.klog"
	done
	grep -q 'topic "grow" partition 4: elected leader' "$TMP"/broker-*.log
}

# lines_in FILE: how many lines FILE has.
lines_in() {
	wc -l <"$1" | tr -d ' '
}

# has_records TOPIC P: whether partition P of TOPIC holds a record.
has_records() {
	[ -n "$(klog-consume -Z "$ZKC" -t "$1" -p "$2" -o beginning -e \
		2>/dev/null | head -n 1)" ]
}

@test "alter-topic -Z: a producer and a group consumer already running take up the new partitions" {
	rep_cluster
	rep_create live 2
	klog-consume -Z "$ZKC" -t live -G readers -o beginning \
		>"$TMP/out" 2>"$TMP/consume.err" &
	local cons=$!
	# Only this shell holds the pipe's writing end, so closing it is
	# the producer's EOF.
	mkfifo "$TMP/in"
	klog-produce -Z "$ZKC" -t live -a all <"$TMP/in" 2>"$TMP/produce.err" &
	local prod=$!
	exec 7>"$TMP/in"
	for i in $(seq 1 20); do echo "a$i" >&7; sleep 0.02; done
	klog-group -Z "$ZKC" alter-topic -t live --partitions 4 >/dev/null
	rep_wait_full live 4
	# Each record is a batch of its own (stdin runs dry after each), and
	# batches go round the partitions the producer knows of.
	for i in $(seq 1 100); do echo "b$i" >&7; sleep 0.02; done
	rep_wait 20 has_records live 2
	rep_wait 20 has_records live 3
	exec 7>&-
	wait "$prod"
	rep_wait 20 eval '[ "$(lines_in "$TMP/out")" -ge 120 ]'
	kill -TERM "$cons"
	wait "$cons" || :
	sort "$TMP/out" | uniq -d >"$TMP/dups"
	[ ! -s "$TMP/dups" ]
	cmp <( (seq 1 20 | sed 's/^/a/'; seq 1 100 | sed 's/^/b/') | sort) \
		<(sort "$TMP/out")
}

@test "alter-topic -Z: refusals and their exit codes" {
	rep_broker 1
	klog-group -Z "$ZKC" create-topic -t few --partitions 3 \
		--replication-factor 1 >/dev/null
	run -1 klog-group -Z "$ZKC" alter-topic -t few --partitions 2
	[ "$output" = 'klog-group: topic "few": it has 3 partitions: partitions are added, never removed (ask for more than 3)' ]
	run -1 klog-group -Z "$ZKC" alter-topic -t few --partitions 3
	[[ "$output" == *'partitions are added, never removed'* ]]
	run -1 klog-group -Z "$ZKC" alter-topic -t nosuch --partitions 3
	[ "$output" = 'klog-group: topic "nosuch": no such topic' ]
	# A broker's own (0.7) topic is its broker's to alter.
	echo x | klog-produce -b "127.0.0.1:${BROKER_PORTS[1]}" -t legacy
	rep_wait 10 eval 'klog-group -Z "$ZKC" -H topics -t legacy | grep -q .'
	run -1 klog-group -Z "$ZKC" alter-topic -t legacy --partitions 4
	[[ "$output" == *'topic "legacy" is not replicated'* ]]
	# Replicated topics are ZooKeeper's: a broker refuses them, and says
	# where to go.
	run -1 klog-group -b "127.0.0.1:${BROKER_PORTS[1]}" alter-topic \
		-t few --partitions 4
	[[ "$output" == *'is replicated: its partitions are ZooKeeper'*'alter it with -Z'* ]]
	run -64 klog-group -Z "$ZKC" alter-topic -t 'bad/name' --partitions 4
	run -64 klog-group -Z "$ZKC" alter-topic -t few
	[[ "$output" == *'alter-topic needs --partitions'* ]]
	run -64 klog-group -Z "$ZKC" alter-topic -t few --partitions 4 \
		--replication-factor 2
	[[ "$output" == *'alter-topic does not take --replication-factor'* ]]
	run -69 klog-group -Z "127.0.0.1:$(free_port)" -T 1s alter-topic \
		-t few --partitions 4
	# Nothing changed by the refusals.
	run -0 klog-group -Z "$ZKC" -H topics -t few
	[ "${#lines[@]}" -eq 3 ]
}

@test "delete-topic -Z: every broker's copy goes, consumers are told, the name starts empty again" {
	rep_cluster
	rep_create gone 2
	seq 1 20 | klog-produce -Z "$ZKC" -t gone -a all
	[ "$(dirs gone | wc -l)" -eq 6 ]
	klog-consume -Z "$ZKC" -t gone -o beginning -u >"$TMP/out" \
		2>"$TMP/err" 3>&- &
	local cpid=$!
	PIDS+=("$cpid")
	rep_wait 10 eval '[ "$(wc -l <"$TMP/out")" -eq 20 ]'
	run -0 klog-group -Z "$ZKC" -H delete-topic -t gone
	[ "$output" = "$(printf 'gone\t2')" ]
	# Done when it returns: no directory on any broker, no node left.
	[ -z "$(dirs gone)" ]
	run -1 klog-group -Z "$ZKC" topics -t gone
	run -1 zk_has /klog/topics/gone
	run -1 zk_has /admin/delete_topics/gone
	grep -q 'topic "gone": marked for deletion: this broker.s copy removed' \
		"$TMP/broker-1.log"
	# The consumer following it stops, and says why.
	wait_gone "$cpid" 10
	run wait "$cpid"
	[ "$status" -eq 1 ]
	grep -q 'topic "gone" partition [01]: the topic no longer exists' \
		"$TMP/err"
	run -1 klog-group -Z "$ZKC" delete-topic -t gone
	[ "$output" = 'klog-group: topic "gone": no such topic' ]
	# Made again: empty, and it takes new records.
	rep_create gone 2
	run -0 klog-consume -Z "$ZKC" -t gone -o beginning -e
	[ -z "$output" ]
	echo fresh | klog-produce -Z "$ZKC" -t gone -p 1 -a all
	run -0 klog-consume -Z "$ZKC" -t gone -o beginning -e
	[ "$output" = fresh ]
	# Never registered as a broker's own topic on the way.
	run -0 klog-group -Z "$ZKC" -H topics
	[ -z "$(grep "^gone	[0-9]*	[0-9]*	127" <<<"$output")" ]
}

@test "delete-topic -Z: a broker down at the time removes its copy when it comes back" {
	rep_cluster
	rep_create away 2
	seq 1 20 | klog-produce -Z "$ZKC" -t away -a all
	rep_wait "$REP_WAIT" rep_settled away
	rep_kill 3
	rep_wait_gone 3
	run -0 --separate-stderr klog-group -Z "$ZKC" -H delete-topic -t away
	[ "$output" = "$(printf 'away\t2')" ]
	[ "$stderr" = 'klog-group: topic "away": marked for deletion; broker 3, down, still holds a copy: the deletion finishes when it comes back' ]
	[ -z "$(ls -d "$TMP"/broker-[12]/away-* 2>/dev/null)" ]
	[ -d "$TMP/broker-3/away-0" ]
	zk_has /admin/delete_topics/away
	zk_has /admin/delete_topics/away/1
	# The name is taken until the deletion finishes.
	run -1 klog-group -Z "$ZKC" create-topic -t away --partitions 1 \
		--replication-factor 2
	[[ "$output" == *'topic "away" is still being deleted'* ]]
	run -1 klog-group -Z "$ZKC" alter-topic -t away --partitions 4
	[[ "$output" == *'topic "away" is being deleted'* ]]
	# Again: nothing new to mark, the same note.
	run -0 klog-group -Z "$ZKC" -H delete-topic -t away
	[[ "$output" == *'broker 3, down, still holds a copy'* ]]
	# Back: the stale copy goes, it was the last, so the nodes go too.
	rep_broker 3
	rep_wait 10 gone_everywhere away
	rep_wait 10 eval '! zk_has /admin/delete_topics/away'
	grep -q 'topic "away": marked for deletion: this broker.s copy removed' \
		"$TMP/broker-3.log"
	grep -q 'topic "away": deleted: no broker holds a copy' \
		"$TMP/broker-3.log"
	# It did not come back as a broker's own topic either.
	run -0 klog-group -Z "$ZKC" -H topics
	[ -z "$(grep "^away	[0-9]*	[0-9]*	127" <<<"$output")" ]
	rep_create away 2
	run -0 klog-consume -Z "$ZKC" -t away -o beginning -e
	[ -z "$output" ]
}

@test "delete-topic -Z: a live broker that does not finish in time is 69; the deletion finishes later" {
	rep_cluster
	rep_create slow 1
	# Stopped, broker 3 is still registered until its session times out.
	kill -STOP "${BROKER_PIDS[3]}"
	run -69 klog-group -Z "$ZKC" -T 1s delete-topic -t slow
	kill -CONT "${BROKER_PIDS[3]}"
	# (1 and 2 may not have finished within the second either.)
	[[ "$output" =~ 'topic "slow": marked for deletion, but of the brokers holding a copy, '([12],)*'3 did not remove it within 1000 ms' ]]
	rep_wait 20 gone_everywhere slow
	rep_wait 10 eval '! zk_has /admin/delete_topics/slow'
}

@test "delete-topic -Z: refusals and their exit codes" {
	rep_broker 1
	run -1 klog-group -Z "$ZKC" delete-topic -t nosuch
	[ "$output" = 'klog-group: topic "nosuch": no such topic' ]
	run -1 zk_has /admin/delete_topics/nosuch
	echo x | klog-produce -b "127.0.0.1:${BROKER_PORTS[1]}" -t legacy
	rep_wait 10 eval 'klog-group -Z "$ZKC" -H topics -t legacy | grep -q .'
	run -1 klog-group -Z "$ZKC" delete-topic -t legacy
	[[ "$output" == *'topic "legacy" is not replicated'* ]]
	[ -d "$TMP/broker-1/legacy-0" ]
	klog-group -Z "$ZKC" create-topic -t kept --partitions 1 \
		--replication-factor 1 >/dev/null
	run -1 klog-group -b "127.0.0.1:${BROKER_PORTS[1]}" delete-topic -t kept
	[[ "$output" == *'is replicated: its partitions are ZooKeeper'*'delete it with -Z'* ]]
	run -64 klog-group -Z "$ZKC" delete-topic -t '..'
	run -64 klog-group -Z "$ZKC" delete-topic
	[[ "$output" == *'delete-topic needs -t'* ]]
	run -64 klog-group -Z "$ZKC" delete-topic -t kept --partitions 1
	[[ "$output" == *'delete-topic does not take --partitions'* ]]
	run -69 klog-group -Z "127.0.0.1:$(free_port)" -T 1s delete-topic \
		-t kept
	run -0 klog-group -Z "$ZKC" -H topics -t kept
	[ "${#lines[@]}" -eq 1 ]
}

@test "klog-group(1)'s -Z examples for replicated topics run" {
	rep_cluster
	export KLOG_ZOOKEEPER=$ZKC
	run -0 klog-group create-topic -t orders --partitions 6 \
		--replication-factor 3 --min-insync-replicas 2
	run -0 klog-group alter-topic -t orders --partitions 12
	[ "${#lines[@]}" -eq 13 ]
	rep_wait_full orders 12
	echo one | klog-produce -t orders -p 11 -a all
	run -0 klog-group delete-topic -t orders
	[ "${lines[1]}" = "$(printf 'orders\t12')" ]
	[ -z "$(dirs orders)" ]
}
