#!/bin/bash
# make soak SOAK=partitions: network partitions, as Jepsen would cut them.
# A ZooKeeper, three brokers and the clients, each in a network namespace
# of its own made here (tests/soak/netns.bash: veths into a bridge in a
# hub namespace, 10.27.0.0/24), so needs root.  Per run a fresh cluster
# under a ZooKeeper chroot of its own: brokers -Z with --zk-session-timeout
# SOAK_ZKS (4000 ms) and --replica-lag-time SOAK_LAG (3 s), a topic of 3
# partitions, replication factor 3, min.insync 2; one acks=all klog-produce
# of numbered records ("r:N", SOAK_RATE=200 a second, spread round robin)
# writing a --report that is time-stamped line by line; a klog-consume -f
# (no group) from the beginning throughout; and a poller
# (partcheck.py poll) scraping each broker's /metrics every 0.25 s (1 s
# deadline), probing each broker with an empty PRODUCE and an OFFSETS
# request (who answers as a partition's leader) and reading the leaders,
# epochs and ISRs from ZooKeeper.  Then one fault:
#   a  a leader cut from ZooKeeper and from its followers, the clients
#      still reaching it;           timings: cut S/2, S+3 s, long
#   b  a leader cut from ZooKeeper only;      the same timings
#   c  a follower cut from its leader;        LAG/2, LAG+3 s, long
#   d  a leader cut as in (a) and healed, ten times (cut/heal seconds):
#                                             1/1, S+1/2, 2S/3
#   e  ZooKeeper stopped SOAK_ZK_DOWN (20) s, the leader killed -9 2 s,
#      10 s or 18 s into it; the broker restarted once ZooKeeper is back
#      and its registration has gone
#   f  SOAK_LOSS (30) % loss and SOAK_DELAY (50) ms delay on a leader's
#      link, for 10 s, 20 s, 1.5 x long
# (S = the session timeout in seconds, long = max(3 S, SOAK_SECONDS / 15),
# 20 s by default.)  The partition is 0, 1, 2 for timings 1, 2, 3.
#
# How: a cut drops packets on the hub's bridge ports (an HTB class ending
# in a pfifo of limit 0, picked by a u32 filter on the source address): no
# RST, no ICMP, the endpoints just stall.  Each cut is checked as it is
# made: a TCP connect across it must time out (not be refused), and the
# clients' connect to a cut leader (a, b, d) must succeed.  Loss and delay:
# this kernel has no netem and no gact action, so tc can only drop all of
# a flow or none; tests/soak/link.py forwards the leader's frames in user
# space between its port, taken off the bridge, and a spare port, dropping
# SOAK_LOSS % and holding the rest SOAK_DELAY ms, on what the leader sends
# (SOAK_LINK_DIR=out, as netem on its eth0 would; "both" for both ways).
# Checked: the connect time to the leader rises by the delay, and the
# share of frames dropped is the loss.
#
# After the fault and the heal: the ISR full again, 3 s of traffic, the
# producer stopped, replicas settled, then partcheck.py check, per run:
#   lost      0 acknowledged records lost: each record a --report line
#             acknowledged is in the final log at the offset it gave;
#   split     0 split brain: no offset acknowledged for two records, and
#             no acknowledgement in a leader epoch more than 0.5 s after
#             the first one of a later epoch (epochs from leader-epochs);
#   stepdown  (a, b, d) a leader that another broker replaced while it
#             was cut stops answering as leader (its probe answers an
#             error, klog_zookeeper_fenced is 1, or it logs "zookeeper:
#             silent for") within S + 1 s of the cut;
#   rejoin    (c) every replica back in the ISR within 5 s of the heal;
#   gap       (a, b, d) no partition goes longer than S + LAG + 3 s
#             between two acknowledgements;
#   metrics   no broker's /metrics goes unanswered for more than
#             SOAK_METRICS_GAP (2) s, but while killed (e) or behind the
#             lossy link (f);
#   consumer  the consumer reaches every partition's committed end, read
#             every acknowledged record, and nothing the final log lacks;
#   replicas  every replica ends at the committed end, byte-identical.
# The report: one line per run with its figures and each target's
# ok/FAIL, then the totals.  The figures: records acknowledged, lost and
# acknowledged in split brain; gap, the longest time between two
# acknowledgements of one partition; stepdown, the slowest step-down of a
# deposed leader after its cut ("never" if not before the heal); stale,
# how long after its successor's election a deposed leader still answered
# as leader; rejoin, from the heal to every replica in the ISR; isr>=,
# the smallest ISR seen during the fault; metrics, the longest time
# between two answered scrapes of one broker; in (f) the frames the link
# dropped and the connect time before and during the link.  Exit 0 only if every run passed; 1 if a
# target failed (the broker's fault); 2 if the harness failed (a cut not
# silent, a link that did not lose, a namespace or process that would not
# start: those runs say HARNESS, not FAIL).
#
# SOAK_SCENARIOS (default "a b c d e f") and SOAK_TIMINGS ("1 2 3") pick
# runs; SOAK_SECONDS (300, as make passes it) sets "long"; the default
# suite takes about 10 minutes.  SOAK_KEEP=1 keeps the runs' files (logs,
# report, poll, data) in the temp dir, which is kept anyway when a run did
# not pass.  Every process is killed by its pid, every namespace deleted,
# also on Ctrl-C or failure.
set -u
cd "$(dirname "$0")/../.." || exit 2
BATS_TEST_DIRNAME=$PWD/tests/bats
. tests/bats/helpers.bash
. tests/soak/netns.bash

PY=/usr/bin/python3
PC=$PWD/tests/soak/partcheck.py
RC=$PWD/tests/bats/repcheck.py
SOAK_SECONDS=${SOAK_SECONDS:-300}
SOAK_SCENARIOS=${SOAK_SCENARIOS:-a b c d e f}
SOAK_TIMINGS=${SOAK_TIMINGS:-1 2 3}
SOAK_ZKS=${SOAK_ZKS:-4000}
SOAK_LAG=${SOAK_LAG:-3}
SOAK_RATE=${SOAK_RATE:-200}
SOAK_LOSS=${SOAK_LOSS:-30}
SOAK_DELAY=${SOAK_DELAY:-50}
SOAK_LINK_DIR=${SOAK_LINK_DIR:-out}
SOAK_METRICS_GAP=${SOAK_METRICS_GAP:-2}
SOAK_ZK_DOWN=${SOAK_ZK_DOWN:-20}
T=part
NPART=3
FMT='%p\t%o\t%O\t%s\n'

harness_die() { echo "soak partitions: HARNESS: $*" >&2; exit 2; }

[ "$(id -u)" = 0 ] || harness_die "needs root (network namespaces)"
[ -x bin/klog-serve ] || harness_die "build first (make all)"
for x in /usr/sbin/ip /usr/sbin/tc /usr/bin/stdbuf "$PY" \
    /usr/share/zookeeper/bin/zkServer.sh; do
	[ -x "$x" ] || harness_die "$x is missing"
done
for x in $SOAK_SCENARIOS; do
	case $x in [abcdef]) ;; *) harness_die "SOAK_SCENARIOS: a to f, not '$x'" ;; esac
done
for x in $SOAK_TIMINGS; do
	case $x in [123]) ;; *) harness_die "SOAK_TIMINGS: 1, 2 or 3, not '$x'" ;; esac
done

S=$(( (SOAK_ZKS + 999) / 1000 ))
LONG=$(( SOAK_SECONDS / 15 ))
[ "$LONG" -ge $((3 * S)) ] || LONG=$((3 * S))
half() { awk -v x="$1" 'BEGIN { printf "%g\n", x / 2 }'; }
declare -a T_a T_c T_d T_e T_f
T_a=("" "$(half "$S")" "$((S + 3))" "$LONG")
T_c=("" "$(half "$SOAK_LAG")" "$((SOAK_LAG + 3))" "$LONG")
T_d=("" "1/1" "$((S + 1))/2" "$((2 * S))/3")
T_e=("" 2 $((SOAK_ZK_DOWN / 2)) $((SOAK_ZK_DOWN - 2)))
T_f=("" 10 20 $((LONG * 3 / 2)))

param() {
	case $1 in
	a|b) echo "${T_a[$2]}" ;;
	c) echo "${T_c[$2]}" ;;
	d) echo "${T_d[$2]}" ;;
	e) echo "${T_e[$2]}" ;;
	f) echo "${T_f[$2]}" ;;
	esac
}
describe() {
	local v
	v=$(param "$1" "$2")
	case $1 in
	a) echo "the leader of partition $P cut from ZooKeeper and its followers for $v s" ;;
	b) echo "the leader of partition $P cut from ZooKeeper for $v s" ;;
	c) echo "a follower of partition $P cut from its leader for $v s" ;;
	d) echo "the leader of partition $P cut as in (a) for ${v%/*} s, healed for ${v#*/} s, ten times" ;;
	e) echo "ZooKeeper stopped ${SOAK_ZK_DOWN} s, the leader of partition $P killed -9 after $v s" ;;
	f) echo "${SOAK_LOSS}% loss, ${SOAK_DELAY} ms delay on the link of partition $P's leader for $v s" ;;
	esac
}

common_setup
NS_PREFIX=klogp$$
NS_DIR=$TMP
RUN_PIDS=()
declare -gA BK=()
STATUS=2
cleanup() {
	local pid left
	trap - EXIT INT TERM
	# TERM to all at once, 3 s for all of them, then KILL.
	stop_all 3 "${RUN_PIDS[@]}" "${PIDS[@]}"
	ns_down
	left=$(ns_left)
	if [ -n "$left" ]; then
		echo "soak partitions: HARNESS: namespaces left:" $left >&2
		STATUS=2
	fi
	if [ "$STATUS" -eq 0 ] && [ -z "${SOAK_KEEP:-}" ]; then
		rm -rf "$TMP"
	else
		echo "soak partitions: the runs' files are in $TMP"
	fi
	exit "$STATUS"
}
trap cleanup EXIT
trap 'echo "soak partitions: interrupted" >&2; STATUS=130; exit 130' INT TERM

# ev NAME K=V...: an event of this run, time-stamped, for partcheck.py.
ev() { printf '%s %s\n' "$EPOCHREALTIME" "$*" >>"$RUN/events"; }
say() { echo "soak partitions: $*"; }

# wait_for SECONDS CMD...: until CMD succeeds, every 0.2 s.
wait_for() {
	local n=$(( $1 * 5 ))
	shift
	until "$@"; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.2
	done
}

kg() { ns_exec cl klog-group -Z "$ZKC" -T 3 "$@"; }
topics_json() { kg topics -t "$T" -J 2>/dev/null; }
# leader_of P: the broker leading partition P (fails while none does).
leader_of() {
	local l
	l=$(topics_json | "$PY" "$RC" get "$1" leader) || return 1
	[ -n "$l" ] && [ "$l" != -1 ] && echo "$l"
}
# led_by B: the partitions broker B leads, comma-separated.
led_by() {
	topics_json | "$PY" -c 'import json, sys
print(",".join(str(o["partition"]) for o in map(json.loads, sys.stdin)
      if o.get("leader") == int(sys.argv[1])))' "$1"
}
# follower_of P: an in-sync follower of partition P.
follower_of() {
	local l
	l=$(leader_of "$1") || return 1
	topics_json | "$PY" "$RC" get "$1" isr | tr , '\n' | grep -vx "$l" |
		head -n 1 | grep .
}
full_isr() { topics_json | "$PY" "$RC" isr-full "$NPART" 3; }
registered() {
	kg -H brokers 2>/dev/null |
		grep -q "^$1	${NS_ADDR[b$1]}	9092\$"
}
others() {
	local b
	for b in 1 2 3; do [ "$b" = "$1" ] || printf 'b%s ' "$b"; done
}

zk_config() {
	ZKDIR=$TMP/zk
	mkdir -p "$ZKDIR/data"
	cat >"$ZKDIR/zoo.cfg" <<-CFG
	tickTime=500
	dataDir=$ZKDIR/data
	clientPort=2181
	clientPortAddress=${NS_ADDR[zk]}
	admin.enableServer=false
	minSessionTimeout=1000
	maxSessionTimeout=10000
	maxClientCnxns=0
	forceSync=no
	4lw.commands.whitelist=srvr
	CFG
}
zk_ok() { ns_exec cl "$PY" "$PC" zkok "${NS_ADDR[zk]}" 2181; }
zk_start() {
	JMXDISABLE=true ip netns exec "$(ns_name zk)" \
		/usr/share/zookeeper/bin/zkServer.sh start-foreground \
		"$ZKDIR/zoo.cfg" >>"$ZKDIR/log" 2>&1 &
	ZKPID=$!
	PIDS+=("$ZKPID")
	wait_for 60 zk_ok
}
zk_stop() {
	kill -TERM "$ZKPID" 2>/dev/null
	wait_gone "$ZKPID" 10 || kill -KILL "$ZKPID" 2>/dev/null
	wait "$ZKPID" 2>/dev/null
	return 0
}

# bk_start ID: broker ID in its namespace (same data dir on a restart),
# its stderr time-stamped into $RUN/broker-ID.log.
bk_start() {
	local id=$1 a=${NS_ADDR[b$1]}
	ip netns exec "$(ns_name "b$id")" klog-serve -Z "$ZKC" \
		--broker-id "$id" -l "$a:9092" --metrics-listen "$a:9644" \
		-d "$RUN/broker-$id" --zk-session-timeout "$SOAK_ZKS" \
		--replica-lag-time "${SOAK_LAG}s" \
		2> >(exec "$PY" "$PC" stamp >>"$RUN/broker-$id.log") &
	BK[$id]=$!
	RUN_PIDS+=("$!")
	wait_for 30 registered "$id"
}
bk_kill() {
	kill -KILL "${BK[$1]}" 2>/dev/null
	wait "${BK[$1]}" 2>/dev/null
	return 0
}
# stop_all SECONDS PID...: TERM to each, KILL to those left after SECONDS.
stop_all() {
	local n=$(( $1 * 10 )) pid left
	shift
	for pid in "$@"; do kill -TERM "$pid" 2>/dev/null; done
	while [ "$n" -gt 0 ]; do
		left=
		for pid in "$@"; do
			kill -0 "$pid" 2>/dev/null && { left=1; break; }
		done
		[ -n "$left" ] || break
		sleep 0.1
		n=$((n - 1))
	done
	for pid in "$@"; do
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	return 0
}
stop() { stop_all 10 "$@"; }

# silent_check FROM TO PORT WANT: in the background, one TCP connect
# across (or past) a cut just made; the event says what came of it.
silent_check() {
	(
		r=$(ns_probe "$1" "$2" "$3" 0.8)
		ev silent from="$1" to="$2" port="$3" want="$4" result="${r%% *}"
	) &
	RUN_PIDS+=("$!")
}

# cut_leader MODE SECONDS: the leader of $P cut from ZooKeeper (b) or
# from ZooKeeper and its followers (a), SECONDS, then healed.
cut_leader() {
	local v led peers p
	wait_for 20 eval 'leader_of "$P" >/dev/null' &&
	v=$(leader_of "$P") || {
		ev broker_fail what=no_leader part="$P"
		return 1
	}
	led=$(led_by "$v")
	peers=zk
	[ "$1" = a ] && peers="zk $(others "$v")"
	ns_cut "b$v" $peers || { ev harness_error what=cut; return 2; }
	ev cut victim="$v" role=leader peers="$(echo $peers | tr ' ' ,)" \
		led="$led" part="$P"
	for p in $peers; do
		silent_check "b$v" "$p" "$([ "$p" = zk ] && echo 2181 || echo 9092)" timeout
	done
	silent_check cl "b$v" 9092 connected
	sleep "$2"
	ns_heal "b$v" $peers
	ev heal victim="$v"
}

fault_a() { cut_leader a "$(param a "$K")"; }
fault_b() { cut_leader b "$(param b "$K")"; }

fault_c() {
	local l f
	l=$(leader_of "$P") && f=$(follower_of "$P") || {
		ev broker_fail what=no_leader_or_follower part="$P"
		return 1
	}
	ns_cut "b$f" "b$l" || { ev harness_error what=cut; return 2; }
	ev cut victim="$f" role=follower peers="b$l" part="$P"
	silent_check "b$f" "b$l" 9092 timeout
	silent_check "b$l" "b$f" 9092 timeout
	silent_check "b$f" zk 2181 connected
	sleep "$(param c "$K")"
	ns_heal "b$f" "b$l"
	ev heal victim="$f"
}

fault_d() {
	local v i
	v=$(param d "$K")
	for ((i = 1; i <= 10; i++)); do
		cut_leader a "${v%/*}" || return
		sleep "${v#*/}"
	done
}

fault_e() {
	local v t
	t=$(param e "$K")
	v=$(leader_of "$P") || { ev broker_fail what=no_leader part="$P"; return 1; }
	ev zk_stop leader="$v"
	zk_stop
	sleep "$t"
	bk_kill "$v"
	ev kill broker="$v"
	sleep $((SOAK_ZK_DOWN - t))
	ev zk_start
	zk_start || { ev harness_error what=zookeeper_restart; return 2; }
	ev zk_up
	wait_for 60 eval "! registered $v" || {
		ev broker_fail what=registration_stays broker="$v"
		return 1
	}
	ev restart broker="$v"
	bk_start "$v" || { ev broker_fail what=restart broker="$v"; return 1; }
	ev restarted broker="$v"
}

fault_f() {
	local v d rb rd frames dropped
	d=$(param f "$K")
	v=$(leader_of "$P") || { ev broker_fail what=no_leader part="$P"; return 1; }
	rb=$(ns_rtt cl "b$v" 9092)
	ns_link_on "b$v" "$SOAK_LOSS" "$SOAK_DELAY" "$SOAK_LINK_DIR" \
		"$RUN/link.stats" || { ev harness_error what=link_on; return 2; }
	ev link_on victim="$v" part="$P"
	sleep 1
	rd=$(ns_rtt cl "b$v" 9092)
	ev link_check rtt_before="$rb" rtt_during="$rd" delay_ms="$SOAK_DELAY"
	sleep $((d > 3 ? d - 3 : 1))
	ns_link_off "b$v" || { ev harness_error what=link_off; return 2; }
	if [ "$SOAK_LINK_DIR" = both ]; then
		read -r frames dropped < <(awk '{ f += $3; d += $5 } END {
			print f + 0, d + 0 }' "$RUN/link.stats")
	else
		read -r frames dropped < <(awk '$1 == "ab" { print $3, $5 }' \
			"$RUN/link.stats")
	fi
	ev link_off victim="$v" frames="${frames:-0}" dropped="${dropped:-0}" \
		loss="$SOAK_LOSS"
}

# Has the consumer read every partition to the end in $RUN/list?
caught_up() {
	awk -F '\t' 'FNR == NR { end[$2] = $4; next }
		{ if ($3 > seen[$1]) seen[$1] = $3 }
		END { for (p in end) if (end[p] > 0 && seen[p] != end[p]) exit 1 }' \
		"$RUN/list" "$RUN/consumed"
}
settled() {
	timeout 10 ip netns exec "$(ns_name cl)" klog-consume -Z "$ZKC" -L \
		-t "$T" >"$RUN/list.settle" 2>/dev/null &&
	"$PY" "$RC" settled "$T" "$RUN/list.settle" "$RUN/broker-1" \
		"$RUN/broker-2" "$RUN/broker-3"
}
# traffic: the report has acknowledgements on every partition.
traffic() {
	local p
	for p in $(seq 0 $((NPART - 1))); do
		grep -qs "\"partition\":$p,\"offset\"" "$RUN/report" || return 1
	done
}

# run_one SCENARIO TIMING
run_one() {
	local s=$1 rc=0 i prod cons poll gen stamp
	K=$2
	P=$(( (K - 1) % NPART ))
	RUN=$TMP/$s$K
	mkdir -p "$RUN"
	ZKC=${NS_ADDR[zk]}:2181/soak-$s$K
	RUN_PIDS=()
	BK=()
	say "$s$K: $(describe "$s" "$K")"
	ev run_start scenario="$s" timing="$K" part="$P" param="$(param "$s" "$K")"
	for i in 1 2 3; do
		bk_start "$i" || { ev harness_error what=broker_start broker="$i"; rc=2; }
	done
	if [ "$rc" = 0 ]; then
		kg create-topic -t "$T" --partitions "$NPART" \
			--replication-factor 3 --min-insync-replicas 2 \
			>/dev/null 2>"$RUN/create.err" &&
		wait_for 30 full_isr ||
			{ ev harness_error what=create_topic; rc=2; }
	fi
	if [ "$rc" = 0 ]; then
		ip netns exec "$(ns_name cl)" "$PY" "$PC" poll --zk "$ZKC" \
			--topic "$T" --parts "$NPART" \
			--brokers "1=${NS_ADDR[b1]},2=${NS_ADDR[b2]},3=${NS_ADDR[b3]}" \
			--klog-group "$PWD/bin/klog-group" \
			>"$RUN/poll" 2>"$RUN/poll.err" &
		poll=$!
		RUN_PIDS+=("$poll")
		ip netns exec "$(ns_name cl)" klog-consume -Z "$ZKC" -t "$T" \
			-o beginning -u -f "$FMT" --zk-session-timeout "$SOAK_ZKS" \
			--retry-for 600s >"$RUN/consumed" 2>"$RUN/consumed.err" &
		cons=$!
		RUN_PIDS+=("$cons")
		mkfifo "$RUN/gen.fifo" "$RUN/report.fifo"
		"$PY" "$RC" gen r "$SOAK_RATE" "$RUN/produce.stop" "$RUN/sent" \
			>"$RUN/gen.fifo" &
		gen=$!
		RUN_PIDS+=("$gen")
		ip netns exec "$(ns_name cl)" stdbuf -oL klog-produce -Z "$ZKC" \
			-t "$T" -a all --zk-session-timeout "$SOAK_ZKS" \
			--retry-for 120s --report - <"$RUN/gen.fifo" \
			>"$RUN/report.fifo" 2>"$RUN/produce.err" &
		prod=$!
		RUN_PIDS+=("$prod")
		"$PY" "$PC" stamp <"$RUN/report.fifo" >"$RUN/report" &
		stamp=$!
		RUN_PIDS+=("$stamp")
		wait_for 30 traffic || { ev harness_error what=no_traffic; rc=2; }
	fi
	if [ "$rc" = 0 ]; then
		ev traffic
		sleep 3
		"fault_$s"
		rc=$?
		ev fault_end rc="$rc"
		[ "$rc" = 2 ] && ns_heal_all
		for i in 1 2 3; do
			[ -n "${NS_LINK_PID[b$i]:-}" ] && ns_link_off "b$i"
		done
		wait_for 30 full_isr || ev broker_fail what=isr_not_full
		sleep 3
		touch "$RUN/produce.stop"
		if ! wait_gone "$prod" 150; then
			ev broker_fail what=producer_hung
			stop "$prod"
		fi
		wait "$prod"
		echo $? >"$RUN/produce.rc"
		wait "$stamp" 2>/dev/null
		ev produce_stop
		wait_for 30 settled || ev note what=not_settled
		timeout 30 ip netns exec "$(ns_name cl)" klog-consume -Z "$ZKC" \
			-L -t "$T" >"$RUN/list" 2>"$RUN/list.err"
		timeout 60 ip netns exec "$(ns_name cl)" klog-consume -Z "$ZKC" \
			-t "$T" -o beginning -e -f "$FMT" >"$RUN/final" \
			2>"$RUN/final.err"
		if wait_for 30 caught_up; then
			ev consumer_end reached=1
		else
			ev consumer_end reached=0
		fi
		ev end
	fi
	wait_gone "${gen:-0}" 5
	stop "${RUN_PIDS[@]}"
	RUN_PIDS=()
	ns_heal_all
	"$PY" "$PC" check --run "$RUN" --scenario "$s" --timing "$K" \
		--zks "$SOAK_ZKS" --lag "$SOAK_LAG" --parts "$NPART" \
		--metrics-gap "$SOAK_METRICS_GAP" --result "$TMP/results" |
		sed 's/^/  /'
}

START=$SECONDS
stale=$(ns_sweep klogp)
[ -z "$stale" ] || say "deleted namespaces an earlier run left:" $stale
ns_up || harness_die "could not make the namespaces"
for n in b1 b2 b3 cl; do
	r=$(ns_probe "$n" zk 2181 0.5)
	case $r in refused*) ;; *) harness_die "$n cannot reach zk: $r" ;; esac
done
zk_config
zk_start || harness_die "ZooKeeper did not start: $(tail -5 "$ZKDIR/log")"
say "namespaces $NS_PREFIX-*, ZooKeeper ${NS_ADDR[zk]}:2181," \
	"session ${SOAK_ZKS} ms, replica lag ${SOAK_LAG} s, data in $TMP"
for s in $SOAK_SCENARIOS; do
	for k in $SOAK_TIMINGS; do
		run_one "$s" "$k"
	done
done
echo
"$PY" "$PC" report "$TMP/results"
STATUS=$?
say "$((SECONDS - START)) s"
exit "$STATUS"
