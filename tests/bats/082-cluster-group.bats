#!/usr/bin/env bats
# klog-consume -Z -G: consumer groups over three brokers.  Members share
# the partitions (disjoint, covering all), a killed member's partitions
# move on, groups are independent, offsets are committed (klog-group
# describe and reset work on them), -e ends a member.

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
	ZKC="$ZK/group$BATS_TEST_NUMBER"
	export KLOG_ZOOKEEPER="$ZKC"
	# Three brokers, six partitions: 1-0 1-1 2-0 2-1 3-0 3-1.
	for id in 1 2 3; do
		start_zk_broker "$id" --zk-session-timeout $ZKS --topic t:2
	done
}

teardown() {
	common_teardown
}

produce() {
	klog-produce -t t --batch 10 --linger 1ms
}

# member NAME [options]: a group member in the background, its output in
# $TMP/NAME.out, its pid in MEMBER[NAME].
declare -gA MEMBER
member() {
	local name=$1
	shift
	klog-consume --zk-session-timeout $ZKS -t t -u -v "$@" \
		>"$TMP/$name.out" 2>"$TMP/$name.err" &
	MEMBER[$name]=$!
	PIDS+=("$!")
}

# owners GROUP: "PARTITION OWNER" lines, one per partition.
owners() {
	klog-group -H describe -g "$1" -t t | awk '{ print $3, $7 }'
}

# settled GROUP N: every partition owned, by N distinct members.
settled() {
	local o
	o=$(owners "$1")
	[ "$(grep -c -v ' -$' <<<"$o")" -eq 6 ] &&
	    [ "$(awk '{ print $2 }' <<<"$o" | sort -u | wc -l)" -eq "$2" ]
}

wait_for() {
	local n=$1
	shift
	until "$@"; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || { owners g >&2; return 1; }
		sleep 0.1
	done
}

# have N FILE...: the files hold at least N distinct lines.
have() {
	local want=$1
	shift
	[ "$(cat "$@" | sort -u | wc -l)" -ge "$want" ]
}

@test "group: three members get disjoint ranges covering all; together they read everything once" {
	seq 1 600 | produce
	member a -G g -o beginning
	member b -G g -o beginning
	member c -G g -o beginning
	wait_for 150 settled g 3
	# Each member owns a contiguous range of two, in 0.7's string order.
	run -0 owners g
	[ "${lines[0]% *}" = 1-0 ]
	[ "${lines[0]#* }" = "${lines[1]#* }" ]
	[ "${lines[2]#* }" = "${lines[3]#* }" ]
	[ "${lines[4]#* }" = "${lines[5]#* }" ]
	seq 601 1200 | produce
	wait_for 150 have 1200 "$TMP/a.out" "$TMP/b.out" "$TMP/c.out"
	# Disjoint: no record twice, as nobody died.
	[ "$(cat "$TMP"/[abc].out | wc -l)" -eq 1200 ]
	[ "$(cat "$TMP"/[abc].out | sort -n | uniq | wc -l)" -eq 1200 ]
	[ -s "$TMP/a.out" ] && [ -s "$TMP/b.out" ] && [ -s "$TMP/c.out" ]
	# Stopped with TERM: the last offsets are committed, no lag.
	kill -TERM "${MEMBER[a]}" "${MEMBER[b]}" "${MEMBER[c]}"
	wait "${MEMBER[a]}"
	wait "${MEMBER[b]}"
	wait "${MEMBER[c]}"
	run -0 klog-group -H describe -g g -t t
	[ "${#lines[@]}" -eq 6 ]
	for l in "${lines[@]}"; do
		read -r _ _ _ cur end lag owner <<<"$l"
		[ "$cur" = "$end" ] && [ "$lag" = 0 ] && [ "$owner" = - ] || { echo "$l"; cat "$TMP"/*.err; false; }
	done
}

@test "group: a member killed with -9 loses its partitions within the session timeout; nothing is lost" {
	seq 1 300 | produce
	member a -G g -o beginning
	member b -G g -o beginning
	wait_for 150 settled g 2
	wait_for 100 have 300 "$TMP/a.out" "$TMP/b.out"
	kill -KILL "${MEMBER[b]}"
	wait "${MEMBER[b]}" || true
	seq 301 600 | produce
	# b's partitions come to a once its session is gone.
	wait_for 150 settled g 1
	wait_for 150 have 600 "$TMP/a.out" "$TMP/b.out"
	run -0 owners g
	[ "$(awk '{ print $2 }' <<<"$output" | sort -u | wc -l)" -eq 1 ]
	grep -q "reads 1-0 1-1 2-0 2-1 3-0 3-1" "$TMP/a.err"
}

@test "group: two groups each receive everything" {
	seq 1 500 | produce
	member x1 -G gx -o beginning
	member x2 -G gx -o beginning
	member y1 -G gy -o beginning
	wait_for 150 have 500 "$TMP/x1.out" "$TMP/x2.out"
	wait_for 150 have 500 "$TMP/y1.out"
	[ "$(sort -u "$TMP/y1.out" | wc -l)" -eq 500 ]
	run -0 klog-group -H list
	[[ "$output" == *"gx	2"* ]]
	[[ "$output" == *"gy	1"* ]]
}

@test "group: -e ends a member once what it owns is read; a new group starts at the end unless -o beginning" {
	seq 1 100 | produce
	# The end, by default: nothing old.
	run -0 klog-consume -G late -t t -e
	[ -z "$output" ]
	run -0 klog-group -H describe -g late -t t
	[ "${#lines[@]}" -eq 6 ]
	seq 101 150 | produce
	run -0 klog-consume -G late -t t -e
	[ "$(printf '%s\n' "${lines[@]}" | sort -n | head -1)" = 101 ]
	[ "${#lines[@]}" -eq 50 ]
	run -0 klog-consume -G early -t t -e -o beginning
	[ "${#lines[@]}" -eq 150 ]
	# Nothing new: nothing again; -c stops early and commits only that.
	run -0 klog-consume -G early -t t -e
	[ -z "$output" ]
	seq 151 200 | produce
	run -0 klog-consume -G early -t t -c 10 -e
	[ "${#lines[@]}" -eq 10 ]
	run -0 klog-consume -G early -t t -e
	[ "${#lines[@]}" -ge 40 ]
	[ "${#lines[@]}" -lt 50 ]
}

@test "group: klog-group describe shows zero lag once drained; reset rewinds a stopped group" {
	seq 1 400 | produce
	run -0 klog-consume -G r -t t -e -o beginning
	[ "${#lines[@]}" -eq 400 ]
	run -0 klog-group -H describe -g r -t t
	for l in "${lines[@]}"; do
		read -r _ _ _ cur end lag _ <<<"$l"
		[ "$cur" = "$end" ] && [ "$lag" = 0 ]
	done
	run -0 klog-group -H describe -g r -t t
	local before=$output
	run -0 klog-group reset -g r -t t --to-earliest --dry-run
	run -0 klog-group -H describe -g r -t t
	[ "$output" = "$before" ]
	run -0 klog-consume -G r -t t -e
	[ -z "$output" ]
	run -0 klog-group reset -g r -t t --to-earliest --execute
	run -0 klog-consume -G r -t t -e
	[ "${#lines[@]}" -eq 400 ]
}

@test "group: usage errors" {
	run -64 env -u KLOG_ZOOKEEPER klog-consume -G g -t t
	[[ "$output" == *"-G needs -Z"* ]]
	run -64 klog-consume -G g -t t -p 0
	run -64 klog-consume -G g -t t --offset-file "$TMP/o"
	run -64 klog-consume -G g -L
	run -64 klog-consume -G 'a/b' -t t
	run -64 klog-consume -t t --commit-interval 1s
	run -64 klog-consume -G g -t t --commit-interval soon
}
