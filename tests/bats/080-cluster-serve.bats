#!/usr/bin/env bats
# klog-serve in cluster mode (-Z): registration in ZooKeeper, a taken
# broker id, an unreachable ZooKeeper, restarts and an expired session.
# One ZooKeeper for the file; each test works under a chroot of its own.

bats_require_minimum_version 1.5.0
load helpers

ZKS=2000	# session timeout asked for (the server allows 1-10 s)

setup_file() {
	start_zk
}

teardown_file() {
	stop_zk
}

setup() {
	common_setup
	unset KLOG_ZOOKEEPER KLOG_BROKERS
	ZKC="$ZK/serve$BATS_TEST_NUMBER"
}

teardown() {
	common_teardown
}

# brokers: "ID HOST PORT" lines as klog-group sees them.
brokers() {
	klog-group -Z "$ZKC" -H brokers | tr '\t' ' '
}

# wait_for N CMD...: until CMD succeeds, N tenths of a second at most.
wait_for() {
	local n=$1
	shift
	until "$@"; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.1
	done
}

registered() {
	klog-group -Z "$ZKC" -H topics | grep -q "^$1	$2	"
}

@test "serve -Z: registers its id and every topic, old and new" {
	start_zk_broker 3 --zk-session-timeout $ZKS --topic old:2
	run -0 brokers
	[ "$output" = "3 127.0.0.1 ${BROKER_PORTS[3]}" ]
	run -0 klog-group -Z "$ZKC" -H topics
	[ "${lines[0]}" = "$(printf 'old\t3-0\t3\t127.0.0.1:%s' "${BROKER_PORTS[3]}")" ]
	[ "${lines[1]}" = "$(printf 'old\t3-1\t3\t127.0.0.1:%s' "${BROKER_PORTS[3]}")" ]
	# Auto-created by a produce: registered by the broker's hook.
	echo x | klog-produce -b "127.0.0.1:${BROKER_PORTS[3]}" -t fresh
	run -0 klog-group -Z "$ZKC" -H topics -t fresh
	[ "$output" = "$(printf 'fresh\t3-0\t3\t127.0.0.1:%s' "${BROKER_PORTS[3]}")" ]
	# Topics already in the data directory are registered at start.
	kill -TERM "${BROKER_PIDS[3]}"
	wait_gone "${BROKER_PIDS[3]}" 10
	run -0 brokers
	[ -z "$output" ]
	start_zk_broker 3 --zk-session-timeout $ZKS
	registered fresh 3-0
	registered old 3-1
	grep -q 'registered as broker 3' "$TMP/broker-3.log"
}

@test "serve -Z: KLOG_ZOOKEEPER and the config file work; -Z wins" {
	local port
	port=$(free_port)
	KLOG_ZOOKEEPER="$ZKC" klog-serve --broker-id 7 -l "127.0.0.1:$port" \
		-d "$TMP/d7" 2>"$TMP/7.log" &
	PIDS+=("$!")
	wait_for 100 eval 'brokers | grep -q "^7 "'
	printf 'zookeeper = %s\nbroker-id = 8\n' "$ZKC" >"$TMP/klog.conf"
	port=$(free_port)
	KLOG_ZOOKEEPER="127.0.0.1:1" klog-serve -c "$TMP/klog.conf" \
		-l "127.0.0.1:$port" -d "$TMP/d8" 2>"$TMP/8.log" &
	PIDS+=("$!")
	wait_for 100 eval 'brokers | grep -q "^8 "'
	port=$(free_port)
	KLOG_ZOOKEEPER="127.0.0.1:1" klog-serve -Z "$ZKC" --broker-id 9 \
		-l "127.0.0.1:$port" -d "$TMP/d9" 2>"$TMP/9.log" &
	PIDS+=("$!")
	wait_for 100 eval 'brokers | grep -q "^9 "'
}

@test "serve -Z: a broker id another broker holds is a clear startup error" {
	start_zk_broker 1 --zk-session-timeout $ZKS
	run -69 klog-serve -Z "$ZKC" --broker-id 1 --zk-session-timeout $ZKS \
		-l "127.0.0.1:$(free_port)" -d "$TMP/other"
	[[ "$output" == *"broker id 1 is already registered"* ]]
	[[ "$output" == *"127.0.0.1:${BROKER_PORTS[1]}"* ]]
	# The first one is untouched.
	run -0 brokers
	[ "$output" = "1 127.0.0.1 ${BROKER_PORTS[1]}" ]
}

@test "serve -Z: no ZooKeeper: retried for --zk-connect-timeout, then 69" {
	local dead start
	dead=$(free_port)
	start=$SECONDS
	run -69 klog-serve -Z "127.0.0.1:$dead" --zk-connect-timeout 1500ms \
		-l "127.0.0.1:$(free_port)" -d "$TMP/d"
	[[ "$output" == *"not connected in time"* ]]
	[ "$((SECONDS - start))" -ge 1 ]
	# The data directory was closed cleanly all the same.
	[ -e "$TMP/d/.klog_cleanshutdown" ]
	run -64 klog-serve -Z "127.0.0.1" -l "127.0.0.1:$(free_port)" \
		-d "$TMP/d"
	run -64 klog-serve -Z "$ZK" --zk-session-timeout 5 -d "$TMP/d"
	[[ "$output" == *"--zk-session-timeout"* ]]
}

@test "serve -Z: killed and restarted at once, it waits out its old node" {
	start_zk_broker 2 --zk-session-timeout $ZKS --topic t:1
	kill -KILL "${BROKER_PIDS[2]}"
	wait_gone "${BROKER_PIDS[2]}" 5
	# The old session's node lingers up to a session timeout.
	start_zk_broker 2 --zk-session-timeout $ZKS
	run -0 brokers
	[ "$output" = "2 127.0.0.1 ${BROKER_PORTS[2]}" ]
	wait_for 100 registered t 2-0
}

@test "serve -Z: an expired session is followed by a new registration" {
	start_zk_broker 4 --zk-session-timeout $ZKS --topic e:1
	# Frozen longer than the session timeout: the server expires it and
	# removes its nodes; once thawed the broker registers again.
	kill -STOP "${BROKER_PIDS[4]}"
	wait_for 100 eval '[ -z "$(brokers)" ]'
	kill -CONT "${BROKER_PIDS[4]}"
	wait_for 100 eval 'brokers | grep -q "^4 "'
	wait_for 50 registered e 4-0
	grep -q 'session expired' "$TMP/broker-4.log"
	grep -q 'registering again' "$TMP/broker-4.log"
	# It kept serving all along.
	echo after | klog-produce -b "127.0.0.1:${BROKER_PORTS[4]}" -t e
	run -0 klog-consume -Z "$ZKC" -t e -o beginning -e
	[ "$output" = after ]
}
