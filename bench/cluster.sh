#!/bin/sh
# cluster: three brokers on this machine, registered in a throwaway
# ZooKeeper, against one standalone broker, with the same three partitions
# in all (one on each broker, or three on the one):
#   klog-produce -Z ZK -t T < file      vs   klog-produce -b BROKER -t T < file
#   klog-consume -Z ZK -t T -o beginning -e > /dev/null   vs   -b BROKER
# on nginx access-log lines (bench_accesslog, fixed seed), each run on
# fresh brokers (and a fresh ZooKeeper chroot).  ZooKeeper is started as
# tests/bats/helpers.bash's start_zk does.  Knob: CLUSTER_LINES (default
# 2000000, times BENCH_SCALE).
. "$(dirname "$0")/lib.sh"

if ! "$ROOT/bin/klog-produce" -h | grep -q -- '-Z'; then
	note "cluster: skipped (no -Z yet)"
	exit 0
fi
ZKSERVER=/usr/share/zookeeper/bin/zkServer.sh
if [ ! -x "$ZKSERVER" ]; then
	note "cluster: skipped (no ZooKeeper at $ZKSERVER)"
	exit 0
fi
bench_setup cluster

# zk_broker ID CONNECT: a cluster-mode broker, returned once registered;
# its pid in BROKER_PID.
zk_broker() {
	broker_start "$WORK/broker-$1" -Z "$2" --broker-id "$1" --topic t:1
	_n=100
	until "$ROOT/bin/klog-group" -Z "$2" -H brokers 2>/dev/null |
		grep -q "^$1	"; do
		_n=$((_n - 1))
		[ "$_n" -gt 0 ] || {
			echo "cluster: broker $1 did not register" >&2
			exit 1
		}
		sleep 0.1
	done
}

# timed NAME ADDR...: klog-produce then klog-consume with ADDR (-b or -Z
# and its value), appending lines/s to $WORK/NAME.p and $WORK/NAME.c.
timed() {
	_name=$1
	shift
	_t0=$(now_s)
	"$ROOT/bin/klog-produce" -q "$@" -t t <"$WORK/input"
	_t1=$(now_s)
	"$ROOT/bin/klog-consume" -v "$@" -t t -o beginning -e \
		>/dev/null 2>"$WORK/consume.err"
	_t2=$(now_s)
	_got=$(awk '{ print $2 }' "$WORK/consume.err")
	[ "$_got" = "$lines" ] || {
		echo "cluster: klog-consume read $_got of $lines" >&2
		cat "$WORK/consume.err" >&2
		exit 1
	}
	note "$_name run $i: klog-produce $(elapsed "$_t0" "$_t1") s," \
		"klog-consume $(elapsed "$_t1" "$_t2") s"
	ratio "$lines" "$(elapsed "$_t0" "$_t1")" 0 >>"$WORK/$_name.p"
	ratio "$lines" "$(elapsed "$_t1" "$_t2")" 0 >>"$WORK/$_name.c"
}

lines=$(scaled "${CLUSTER_LINES:-2000000}" 1000)
"$B/bench_accesslog" -n "$lines" >"$WORK/input"
note "$lines lines, $(wc -c <"$WORK/input") bytes, $RUNS runs"
zk_start
: >"$WORK/single.p"; : >"$WORK/single.c"
: >"$WORK/three.p"; : >"$WORK/three.c"
i=1
while [ "$i" -le "$RUNS" ]; do
	broker_start "$WORK/single" --topic t:3
	timed single -b "$BROKER"
	broker_stop
	rm -rf "$WORK/single"
	zkc=$ZK/bench$i
	zk_broker 1 "$zkc"
	b1=$BROKER_PID
	zk_broker 2 "$zkc"
	b2=$BROKER_PID
	zk_broker 3 "$zkc"
	b3=$BROKER_PID
	timed three -Z "$zkc"
	for b in $b1 $b2 $b3; do broker_stop "$b"; done
	rm -rf "$WORK"/broker-*
	i=$((i + 1))
done
for k in p c; do
	s=$(median <"$WORK/single.$k")
	t=$(median <"$WORK/three.$k")
	what=$([ "$k" = p ] && echo produce || echo consume)
	say "cluster_single_${what}_lines_s" "$s" lines/s
	say "cluster_three_${what}_lines_s" "$t" lines/s
	say "cluster_three_${what}_ratio" "$(ratio "$t" "$s")" of_single
done
