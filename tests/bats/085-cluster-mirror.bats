#!/usr/bin/env bats
# Mirroring a cluster (klog(7), doc/mirroring.md): members of one
# consumer group (-Z -G), each piped into its own klog-produce, share one
# bookmark file.  A partition a member is given starts where the file
# says, read again at each rebalance, so a member's kill -9 moves its
# partitions to the others without a gap.

bats_require_minimum_version 1.5.0
load helpers

ZKS=2000
N=40000

setup_file() {
	start_zk
}

teardown_file() {
	stop_zk
}

setup() {
	common_setup
	unset KLOG_ZOOKEEPER KLOG_BROKERS
	ZKC="$ZK/mirror$BATS_TEST_NUMBER"
	for id in 1 2; do
		start_zk_broker "$id" --zk-session-timeout $ZKS --topic T:2
	done
	DST_PORT=$(free_port)
	DST=127.0.0.1:$DST_PORT
	klog-serve -q -d "$TMP/dst" -l "$DST" --topic T:2 2>>"$TMP/dst.log" &
	PIDS+=("$!")
	wait_port "$DST_PORT" 10
	F=$TMP/mirror.offsets
}

teardown() {
	common_teardown
}

# mirror NAME [consumer options]: one member and its producer; pids in
# CONS[NAME] and PROD[NAME].
declare -gA CONS PROD
mirror() {
	local name=$1
	shift
	rm -f "$TMP/$name.pipe"
	mkfifo "$TMP/$name.pipe"
	klog-consume -q -Z "$ZKC" --zk-session-timeout $ZKS -G m -t T -J \
		--offsets-from "$F" "$@" >"$TMP/$name.pipe" 2>>"$TMP/$name.err" &
	CONS[$name]=$!
	klog-produce -q -b "$DST" -t T -J --source-offset-file "$F" \
		<"$TMP/$name.pipe" 2>>"$TMP/$name.perr" &
	PROD[$name]=$!
	PIDS+=("${CONS[$name]}" "${PROD[$name]}")
}

@test "cluster mirror: two members share the bookmark; one killed -9, the other goes on from it" {
	local i step=$((N / 40))
	{
		for (( i = 1; i <= N; i += step )); do
			seq "$i" $((i + step - 1)) |
				klog-produce -q -Z "$ZKC" -t T || exit 1
			sleep 0.05
		done
	} &
	local tr=$!
	PIDS+=("$tr")
	mirror a
	mirror b
	sleep 1.5
	kill -KILL "${CONS[a]}"
	wait_mirror_producer "${PROD[a]}" "$TMP/a.perr"
	wait "$tr"
	# b is given a's partitions and reads them from the file.
	sleep 4
	kill -TERM "${CONS[b]}"
	wait_gone "${PROD[b]}" 30
	# What is left, by one member that stops at the end.
	mirror c -e
	wait "${CONS[c]}"
	wait "${PROD[c]}"
	klog-consume -b "$DST" -t T -o beginning -e | sort -n -u |
		cmp - <(seq 1 "$N")
	# Every source partition is in the file.
	[ "$(grep -vc '^#' "$F")" -eq 4 ]
	[ -z "$(ls "$TMP" | grep 'mirror\.offsets\.tmp')" ]
}
