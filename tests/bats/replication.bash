# Helpers of the replication fault tests (112-replication-faults.bats) and
# the soak (tests/soak/replication.sh): three brokers registered in a real
# ZooKeeper, replicated topics, kill -9 and restarts on the same port and
# data directory, acks=all producers of numbered records and a consumer
# running throughout, and tests/bats/repcheck.py to check the result.
# Load after helpers.bash; everything runs on 127.0.0.1, free ports, $TMP,
# and every process is killed by its pid.
#
# Needs: $ZK (start_zk), $TMP and PIDS (common_setup).  ZKC is the chroot
# (default $ZK).  Broker ID's data is $TMP/broker-ID, its log
# $TMP/broker-ID.log, its port BROKER_PORTS[ID], its pid BROKER_PIDS[ID].
#
# Records: the producer of partition p writes "p:1", "p:2", ... (one
# klog-produce -p p per partition, so order within a partition is the
# producer's).  klog-produce reports no per-record offsets, so "no
# acknowledged record lost" is checked as: each producer exited 0 (every
# record acknowledged), so every line it read is in the final log.

REP_PY=/usr/bin/python3
REPCHECK="${BATS_TEST_DIRNAME:-$(dirname "${BASH_SOURCE[0]}")}/repcheck.py"
REP_FMT='%p\t%o\t%O\t%s\n'
REP_ZKS=${REP_ZKS:-2000}	# broker and client session timeout, ms
REP_LAG=${REP_LAG:-3s}	# --replica-lag-time
REP_RETRY=${REP_RETRY:-90s}	# clients' --retry-for through the faults
REP_WAIT=${REP_WAIT:-60}	# bound of every wait, seconds
declare -gA PROD_PIDS
declare -ga REP_SENT=() REP_CONSUMED=()
REP_NPART=0

rep_zk() { printf '%s' "${ZKC:-$ZK}"; }

# rep_log MESSAGE: progress into $TMP/rep.log (rep_logs shows it).
rep_log() { printf '# %s\n' "$*" >>"$TMP/rep.log"; }

# rep_wait SECONDS CMD...: until CMD succeeds, polling every 0.2 s.
rep_wait() {
	local n=$(( $1 * 5 ))
	shift
	until "$@"; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || { rep_log "gave up waiting for: $*"; return 1; }
		sleep 0.2
	done
}

# rep_broker ID: start (or restart, same port and data directory) broker
# ID with the replication options; returns once it is registered.
rep_broker() {
	start_zk_broker "$1" --zk-session-timeout "$REP_ZKS" \
		--replica-lag-time "$REP_LAG" ${REP_BROKER_OPTS:-}
	rep_log "broker $1 started, pid ${BROKER_PIDS[$1]}"
}

# rep_cluster: brokers 1, 2 and 3.
rep_cluster() {
	rep_broker 1 && rep_broker 2 && rep_broker 3
}

# rep_registered ID: whether /brokers/ids/ID is there.
rep_registered() {
	klog-group -Z "$(rep_zk)" -H brokers 2>/dev/null | grep -q "^$1	"
}

# rep_kill ID: kill -9 broker ID (by its pid) and reap it.
rep_kill() {
	local pid=${BROKER_PIDS[$1]}
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null || :
	rep_log "broker $1 killed -9"
	return 0
}

# rep_wait_gone ID: until broker ID's registration has expired.
rep_wait_gone() {
	rep_wait "$REP_WAIT" eval "! rep_registered $1"
}

# rep_restart ID: after a kill, wait for the registration to expire (as
# replication_test.py does), then start the broker again.
rep_restart() {
	rep_wait_gone "$1" && rep_broker "$1"
}

# rep_create TOPIC NPART: RF 3, min.insync 2; waits for a full ISR.
rep_create() {
	klog-group -Z "$(rep_zk)" create-topic -t "$1" --partitions "$2" \
		--replication-factor 3 --min-insync-replicas 2 || return 1
	REP_NPART=$2
	rep_wait_full "$1" "$2"
}

# rep_topics TOPIC: klog-group topics -J.
rep_topics() {
	klog-group -Z "$(rep_zk)" topics -t "$1" -J 2>/dev/null
}

# rep_full TOPIC NPART: every partition has a leader and all 3 in its ISR.
rep_full() {
	rep_topics "$1" | "$REP_PY" "$REPCHECK" isr-full "$2" 3
}

# rep_wait_full TOPIC NPART
rep_wait_full() {
	rep_wait "$REP_WAIT" rep_full "$1" "$2" || {
		rep_topics "$1" >&2
		return 1
	}
}

# rep_get TOPIC P KEY: leader, leader_epoch, isr or replicas (comma list)
# of partition P; fails when it has none (no leader: empty or -1).
rep_get() {
	local v
	v=$(rep_topics "$1" | "$REP_PY" "$REPCHECK" get "$2" "$3") || return 1
	[ -n "$v" ] && [ "$v" != -1 ] && printf '%s\n' "$v"
}

rep_leader() { rep_get "$1" "$2" leader; }

# rep_new_leader TOPIC P OLD...: partition P has a leader, none of OLD.
rep_new_leader() {
	local t=$1 p=$2 l o
	shift 2
	l=$(rep_leader "$t" "$p") || return 1
	for o in "$@"; do [ "$l" != "$o" ] || return 1; done
}

# rep_wait_new_leader TOPIC P OLD...
rep_wait_new_leader() {
	rep_wait "$REP_WAIT" rep_new_leader "$@"
}

# rep_follower TOPIC P: an in-sync follower of partition P (not its leader).
rep_follower() {
	local l
	l=$(rep_leader "$1" "$2") || return 1
	rep_get "$1" "$2" isr | tr , '\n' | grep -vx "$l" | head -n 1 | grep .
}

# rep_isr_is TOPIC P IDS: the ISR of P is exactly IDS ("1,3"; any order).
rep_isr_is() {
	local isr
	isr=$(rep_get "$1" "$2" isr) || return 1
	[ "$(tr , '\n' <<<"$isr" | sort -n | paste -sd,)" = \
	  "$(tr , '\n' <<<"$3" | sort -n | paste -sd,)" ]
}

# rep_produce_start TOPIC NPART RATE: for each partition p, numbered
# records "p:N" at RATE a second into an acks=all klog-produce -p p, until
# rep_produce_stop.
rep_produce_start() {
	local t=$1 n=$2 rate=$3 p
	rm -f "$TMP/produce.stop"
	for ((p = 0; p < n; p++)); do
		rm -f "$TMP/sent-$p"
		"$REP_PY" "$REPCHECK" gen "$p" "$rate" "$TMP/produce.stop" \
			"$TMP/sent-$p" 3>&- |
			klog-produce -Z "$(rep_zk)" -t "$t" -p "$p" -a all \
				--zk-session-timeout "$REP_ZKS" \
				--retry-for "$REP_RETRY" --linger 20ms \
				2>"$TMP/produce-$p.err" 3>&- &
		PROD_PIDS[$p]=$!
		PIDS+=("$!")
	done
}

# rep_produce_stop: end the records; every producer must exit 0 (every
# record acknowledged).  Sets REP_SENT (P=N for repcheck --sent); with no
# producers started, leaves it as the test set it.
rep_produce_stop() {
	local p rc=0 st
	touch "$TMP/produce.stop"
	[ "${#PROD_PIDS[@]}" -gt 0 ] || return 0	# none: REP_SENT as set
	REP_SENT=()
	for p in "${!PROD_PIDS[@]}"; do
		if ! wait_gone "${PROD_PIDS[$p]}" "$REP_WAIT"; then
			echo "klog-produce -p $p did not finish" >&2
			rc=1
			continue
		fi
		st=0
		wait "${PROD_PIDS[$p]}" || st=$?
		if [ "$st" -ne 0 ]; then
			echo "klog-produce -p $p exited $st:" >&2
			cat "$TMP/produce-$p.err" >&2
			rc=1
		fi
		REP_SENT+=("$p=$(cat "$TMP/sent-$p" 2>/dev/null || echo -1)")
	done
	PROD_PIDS=()
	rep_log "produced: ${REP_SENT[*]}"
	return "$rc"
}

# rep_consume_start TOPIC: a consumer following every partition from the
# beginning throughout the faults, into $TMP/consumed-N.
rep_consume_start() {
	local f="$TMP/consumed-${#REP_CONSUMED[@]}"
	: >"$f"
	klog-consume -Z "$(rep_zk)" -t "$1" -o beginning -u -f "$REP_FMT" \
		--zk-session-timeout "$REP_ZKS" --retry-for "$REP_RETRY" \
		>"$f" 2>"$f.err" 3>&- &
	PIDS+=("$!")
	REP_CONSUMED+=("$f")
	REP_CONSUMER_PID=$!
}

# rep_consumed P: records of partition P the consumer has written so far.
rep_consumed() {
	awk -F '\t' -v p="$1" '$1 == p' "${REP_CONSUMED[-1]}" | wc -l
}

# rep_wait_progress P N: until the consumer has seen N more records of
# partition P than now: the cluster carries on.
rep_wait_progress() {
	local want=$(( $(rep_consumed "$1") + $2 ))
	rep_wait "$REP_WAIT" eval '[ "$(rep_consumed '"$1"')" -ge '"$want"' ]'
}

# rep_caught_up LISTFILE: the consumer has read every partition to the
# committed end in LISTFILE (klog-consume -L).
rep_caught_up() {
	awk -F '\t' 'FNR == NR { end[$2] = $4; next }
		{ if ($3 > seen[$1]) seen[$1] = $3 }
		END { for (p in end) if (end[p] > 0 && seen[p] != end[p]) exit 1 }' \
		"$1" "${REP_CONSUMED[-1]}"
}

# rep_check TOPIC: after the faults: full ISR, producers stopped (exit 0),
# the consumer still running and caught up, then repcheck.py over the
# final log, what was consumed and the replicas on disk.
rep_check() {
	local t=$1
	rep_wait_full "$t" "$REP_NPART" || return 1
	rep_produce_stop || return 1
	rep_wait_full "$t" "$REP_NPART" || return 1
	# Records appended but never acknowledged (a failed request's) may
	# still be on their way to the followers: wait for HW = LEO on every
	# replica (repcheck says what is wrong if that never comes).
	rep_wait "$REP_WAIT" rep_settled "$t" || :
	klog-consume -Z "$(rep_zk)" -L -t "$t" >"$TMP/list" || return 1
	klog-consume -Z "$(rep_zk)" -t "$t" -o beginning -e -f "$REP_FMT" \
		>"$TMP/final" || return 1
	if [ -n "${REP_CONSUMER_PID:-}" ]; then
		kill -0 "$REP_CONSUMER_PID" || {
			echo "the consumer died:" >&2
			cat "${REP_CONSUMED[-1]}.err" >&2
			return 1
		}
		rep_wait "$REP_WAIT" rep_caught_up "$TMP/list" || {
			echo "the consumer did not catch up" >&2
			return 1
		}
		kill -TERM "$REP_CONSUMER_PID"
		wait_gone "$REP_CONSUMER_PID" 5
	fi
	"$REP_PY" "$REPCHECK" check --topic "$t" --list "$TMP/list" \
		--final "$TMP/final" --sent "${REP_SENT[@]}" \
		--consumed "${REP_CONSUMED[@]}" \
		--dirs "$TMP/broker-1" "$TMP/broker-2" "$TMP/broker-3" \
		--wait 5
}

# rep_settled TOPIC: klog-consume -L's committed ends are where every
# replica on disk ends.
rep_settled() {
	klog-consume -Z "$(rep_zk)" -L -t "$1" >"$TMP/list.settle" 2>/dev/null &&
	"$REP_PY" "$REPCHECK" settled "$1" "$TMP/list.settle" \
		"$TMP/broker-1" "$TMP/broker-2" "$TMP/broker-3"
}

# rep_teardown: stop the record generators (their producers are in PIDS),
# and show the logs of a failed test.
rep_teardown() {
	touch "$TMP/produce.stop" 2>/dev/null
	[ -n "${BATS_TEST_COMPLETED:-}" ] || rep_logs || :
}

# rep_newest_segment DIR: the newest segment file in a partition directory.
rep_newest_segment() {
	find "$1" -maxdepth 1 -regextype posix-extended \
		-regex '.*/[0-9]{20}\.(klog|kafka)' | sort | tail -n 1
}

# rep_cut_tail ID TOPIC BYTES: power loss on stopped broker ID: cut BYTES
# (at most the file) off the newest segment of each of its partitions of
# TOPIC.  Prints how many bytes were cut in all.
rep_cut_tail() {
	local d seg size cut total=0
	for d in "$TMP/broker-$1/$2"-*; do
		[ -d "$d" ] || continue
		seg=$(rep_newest_segment "$d")
		[ -n "$seg" ] || continue
		size=$(stat -c %s "$seg")
		cut=$(( size < $3 ? size : $3 ))
		truncate -s "-$cut" "$seg"
		total=$((total + cut))
	done
	rep_log "broker $1: cut $total bytes"
	echo "$total"
}

# rep_logs: the tail of every broker's log and the progress log, for a
# failing test's output.
rep_logs() {
	local f
	for f in "$TMP"/rep.log "$TMP"/broker-*.log "$TMP"/produce-*.err \
		"$TMP"/consumed-*.err; do
		[ -s "$f" ] || continue
		echo "== $f"
		tail -n 30 "$f"
	done
}
