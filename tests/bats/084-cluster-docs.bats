#!/usr/bin/env bats
# The cluster-mode examples of klog-serve(1), klog-produce(1) and
# klog-consume(1) run (ZooKeeper, ports and paths moved into the test),
# and the completions offer the cluster flags.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	common_setup
	unset KLOG_ZOOKEEPER KLOG_BROKERS
}

teardown() {
	common_teardown
}

# The "$ " lines of the subsection named $2 of page $1.
section_examples() {
	awk -v ss=".Ss $2" '$0 == ss { on = 1; next }
	    /^\.S[sh] / { on = 0 }
	    on && /^\$ / { sub(/^\$ /, ""); print }' "$KLOG_ROOT/man/$1" |
	    sed 's/\\e/\\/g'
}

# A page's command with the test's ZooKeeper, directories and ports.
local_cmd() {
	local cmd=$1
	cmd=${cmd//zk1:2181\/klog/$ZK/klog}
	cmd=${cmd//\/var\/lib\/klog/$TMP/var}
	cmd=${cmd//0.0.0.0:9092/127.0.0.1:$P1}
	cmd=${cmd//0.0.0.0:9093/127.0.0.1:$P2}
	cmd=${cmd//0.0.0.0:9094/127.0.0.1:$P3}
	printf '%s\n' "$cmd"
}

@test "cluster docs: the examples of the three pages run together" {
	local cmd n=0 pids=()
	start_zk
	P1=$(free_port) P2=$(free_port) P3=$(free_port)
	section_examples klog-serve.1 "Cluster mode" >"$TMP/serve"
	[ "$(wc -l <"$TMP/serve")" -eq 3 ]
	while IFS= read -r cmd; do
		n=$((n + 1))
		bash -c "exec $(local_cmd "$cmd")" 2>"$TMP/serve$n.log" &
		PIDS+=("$!")
	done <"$TMP/serve"
	n=200
	until [ "$(klog-group -Z "$ZK/klog" -H brokers | wc -l)" -eq 3 ]; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || { cat "$TMP"/serve*.log; false; }
		sleep 0.1
	done
	cmd=$(section_examples klog-produce.1 "Cluster mode")
	run -0 bash -c "$(local_cmd "$cmd")"
	run -0 klog-group -Z "$ZK/klog" -H topics -t numbers
	[ "${#lines[@]}" -eq 3 ]
	# Three members as the page says, on a topic of their own.
	seq 1 300 | klog-produce -Z "$ZK/klog" -t clicks
	cmd=$(section_examples klog-consume.1 "Consumer groups")
	for i in 1 2 3; do
		bash -c "exec $(local_cmd "$cmd")" >"$TMP/m$i.out" &
		PIDS+=("$!")
	done
	n=300
	until [ "$(cat "$TMP"/m?.out | sort -u | wc -l)" -eq 300 ]; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || false
		sleep 0.1
	done
	run -0 klog-group -Z "$ZK/klog" -H list
	[ "$output" = "$(printf 'stats\t3')" ]
	stop_zk
}

@test "cluster docs: the completions offer the cluster flags" {
	run -0 bash -c 'source "$1/completions/klog.bash"
		COMP_WORDS=(klog-consume --zk); COMP_CWORD=1; _klog_consume
		echo "${COMPREPLY[*]}"
		COMP_WORDS=(klog-consume --gr); COMP_CWORD=1; _klog_consume
		echo "${COMPREPLY[*]}"
		COMP_WORDS=(klog-produce --zo); COMP_CWORD=1; _klog_produce
		echo "${COMPREPLY[*]}"
		COMP_WORDS=(klog-serve --zk-); COMP_CWORD=1; _klog_serve
		echo "${COMPREPLY[*]}"' _ "$KLOG_ROOT"
	[ "${lines[0]}" = "--zk-session-timeout --zk-auth-file" ]
	[ "${lines[1]}" = "--group" ]
	[ "${lines[2]}" = "--zookeeper" ]
	[ "${lines[3]}" = "--zk-acls --zk-auth-file --zk-connect-timeout --zk-session-timeout" ]
}
