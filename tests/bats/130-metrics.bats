#!/usr/bin/env bats
# klog-serve --metrics-listen: the Prometheus endpoint's format (promtool),
# its counters against what the test produced and consumed, the log-end
# gauge against klog-consume -L, 404 and the other refusals, a
# half-sent request that must not stall producers and consumers, and a
# broker in a cluster: its own families, a follower's fetch timeouts.

bats_require_minimum_version 1.5.0
load helpers
load replication

setup() {
	common_setup
	METRICS_PORT=$(free_port)
	start_broker --metrics-listen "127.0.0.1:$METRICS_PORT"
	wait_port "$METRICS_PORT" 5
}

teardown() {
	common_teardown
}

# http METHOD PATH: the status line's code on the first line, then the
# body (python3: tests/deps.sh has no curl).
http() {
	python3 - "$METRICS_PORT" "$1" "$2" <<'EOF'
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)
c.request(sys.argv[2], sys.argv[3])
r = c.getresponse()
print(r.status)
print(r.getheader("Content-Type"))
sys.stdout.write(r.read().decode())
EOF
}

# metric NAME [LABELS]: the value of one sample of the exposition.
metric() {
	local k=$1
	[ -z "${2:-}" ] || k="$1{$2}"
	http GET /metrics | K=$k awk '$1 == ENVIRON["K"] { print $2 }'
}

@test "GET /metrics: text format 0.0.4 that promtool accepts" {
	seq 100 | klog-produce -t app
	run -0 http GET /metrics
	[ "${lines[0]}" = 200 ]
	[ "${lines[1]}" = "text/plain; version=0.0.4; charset=utf-8" ]
	http GET /metrics | tail -n +3 >"$TMP/m.txt"
	run -0 promtool check metrics <"$TMP/m.txt"
	# Every family the man page lists is there, with HELP and TYPE.
	for m in klog_messages_in_total klog_bytes_in_total \
	    klog_bytes_out_total klog_log_start_offset klog_log_end_offset \
	    klog_log_flushed_offset klog_log_segments klog_log_size_bytes \
	    klog_requests_total klog_request_seconds klog_connections \
	    klog_connections_refused_total klog_parked_requests \
	    klog_fsync_seconds klog_cold_read_bytes_total \
	    klog_retention_deleted_segments_total klog_replica_isr_size \
	    klog_replica_follower_lag_bytes klog_under_replicated_partitions
	do
		grep -q "^# HELP $m " "$TMP/m.txt"
		grep -q "^# TYPE $m " "$TMP/m.txt"
	done
}

@test "the counters agree with what was produced and consumed" {
	seq 1000 | klog-produce -t app
	seq 500 | klog-produce -t app
	klog-consume -t app -o beginning -e >"$TMP/out"
	[ "$(wc -l <"$TMP/out")" -eq 1500 ]
	labels='topic="app",partition="0"'
	end=$(klog-consume -t app -L | awk '$1 == "app" && $2 == 0 { print $4 }')
	[ "$(metric klog_messages_in_total "$labels")" -eq 1500 ]
	# Every byte of the log came from the producer and went to the
	# consumer, once.
	[ "$(metric klog_bytes_in_total "$labels")" -eq "$end" ]
	[ "$(metric klog_bytes_out_total "$labels")" -eq "$end" ]
	[ "$(metric klog_log_end_offset "$labels")" -eq "$end" ]
	[ "$(metric klog_log_flushed_offset "$labels")" -eq "$end" ]
	[ "$(metric klog_log_size_bytes "$labels")" -eq "$end" ]
	[ "$(metric klog_log_start_offset "$labels")" -eq 0 ]
	[ "$(metric klog_log_segments "$labels")" -eq 1 ]
	[ "$(metric klog_requests_total 'api="produce",error="none"')" -ge 2 ]
	[ "$(metric klog_requests_total 'api="fetch",error="none"')" -ge 1 ]
	[ "$(metric klog_fsync_seconds_count)" -ge 1 ]
}

@test "a path other than /metrics is 404; another method 405" {
	run -0 http GET /
	[ "${lines[0]}" = 404 ]
	run -0 http GET /metrics/x
	[ "${lines[0]}" = 404 ]
	run -0 http POST /metrics
	[ "${lines[0]}" = 405 ]
	# A query string is ignored, as Prometheus may send one.
	run -0 http GET '/metrics?x=1'
	[ "${lines[0]}" = 200 ]
}

@test "a request head over 8 KiB is refused with 431 and closed" {
	run -0 python3 - "$METRICS_PORT" <<'EOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 9000 + b"\r\n\r\n")
data = b""
while True:
    b = s.recv(4096)
    if not b:
        break
    data += b
print(data.split(b"\r\n")[0].decode())
EOF
	[ "$output" = "HTTP/1.1 431 Request Header Fields Too Large" ]
}

@test "a half-sent request does not stall producers and consumers, and is closed" {
	# The client sends half a request line and waits for the broker to
	# close it; meanwhile the broker serves everyone else.
	python3 - "$METRICS_PORT" >"$TMP/half" <<'EOF' &
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /metr")
s.settimeout(30)
print("closed" if s.recv(1) == b"" else "answered")
EOF
	half=$!
	PIDS+=("$half")
	sleep 0.5
	seq 2000 | klog-produce -t app
	[ "$(klog-consume -t app -o beginning -e | wc -l)" -eq 2000 ]
	run -0 http GET /metrics
	[ "${lines[0]}" = 200 ]
	# Closed by the deadline, without an answer.
	wait "$half"
	[ "$(cat "$TMP/half")" = closed ]
}

@test "metrics-listen in the config file; a bad address is a usage error" {
	run -64 klog-serve -d "$TMP/d2" -l "127.0.0.1:$(free_port)" \
		--metrics-listen "127.0.0.1:notaport"
	[[ "$output" == *"--metrics-listen 127.0.0.1:notaport"* ]]
	port=$(free_port)
	mport=$(free_port)
	printf 'listen = 127.0.0.1:%s\nmetrics-listen = 127.0.0.1:%s\n' \
		"$port" "$mport" >"$TMP/conf"
	klog-serve -c "$TMP/conf" -d "$TMP/d3" 2>>"$TMP/broker.log" &
	PIDS+=("$!")
	wait_port "$mport" 5
	METRICS_PORT=$mport run -0 http GET /metrics
	[ "${lines[0]}" = 200 ]
}

@test "the Kafka listener's requests and messages are counted too" {
	kill -TERM "$BROKER_PID"
	wait_gone "$BROKER_PID" 10
	KPORT=$(free_port)
	start_broker --metrics-listen "127.0.0.1:$METRICS_PORT" \
		--kafka-listen "127.0.0.1:$KPORT"
	wait_port "$METRICS_PORT" 5
	seq 1000 | timeout 30 kcat -b "127.0.0.1:$KPORT" -P -t kk -p 0
	run -0 timeout 30 kcat -b "127.0.0.1:$KPORT" -C -t kk -p 0 \
		-o beginning -e -q
	[ "${#lines[@]}" -eq 1000 ]
	[ "$(metric klog_messages_in_total 'topic="kk",partition="0"')" = 1000 ]
	# The bytes stored: kcat's batches as magic-2 entries (however
	# librdkafka cut them), each read once.
	stored=$(stat -c %s "$BROKER_DATA/kk-0/00000000000000000000.klog")
	[ "$stored" -gt 3893 ]
	[ "$(metric klog_bytes_in_total 'topic="kk",partition="0"')" = "$stored" ]
	[ "$(metric klog_bytes_out_total 'topic="kk",partition="0"')" = "$stored" ]
	[ "$(metric klog_requests_total 'api="kafka_produce",error="none"')" -ge 1 ]
	[ "$(metric klog_requests_total 'api="kafka_fetch",error="none"')" -ge 1 ]
	# librdkafka's first ApiVersions (v3, flexible) is answered as it is.
	[ "$(metric klog_requests_total 'api="kafka_api_versions",error="none"')" -ge 1 ]
	[ -z "$(metric klog_requests_total 'api="kafka_api_versions",error="unsupported_version"')" ]
	http GET /metrics | tail -n +3 | promtool check metrics
}

@test "with -Z: the session's state, and a follower's fetches given up on a stalled leader" {
	local l f id
	local -A mp
	start_zk
	ZKC=$ZK
	for id in 1 2; do
		mp[$id]=$(free_port)
		start_zk_broker "$id" --metrics-listen "127.0.0.1:${mp[$id]}"
	done
	klog-group -Z "$ZK" create-topic -t rt --partitions 1 \
		--replication-factor 2 --min-insync-replicas 1 >/dev/null
	rep_wait "$REP_WAIT" eval 'rep_topics rt | "$REP_PY" "$REPCHECK" isr-full 1 2'
	l=$(rep_leader rt 0)
	f=$((3 - l))
	METRICS_PORT=${mp[$f]} http GET /metrics | tail -n +3 >"$TMP/f.txt"
	run -0 promtool check metrics <"$TMP/f.txt"
	grep -qx 'klog_zookeeper_session_state 1' "$TMP/f.txt"
	grep -qx 'klog_replica_fetch_timeouts_total{phase="connect"} 0' "$TMP/f.txt"
	grep -qx 'klog_replica_fetch_timeouts_total{phase="fetch"} 0' "$TMP/f.txt"
	# The leader stopped for 3.5 s (inside its 6 s session): its kernel
	# still takes the follower's connections, it answers none of the
	# fetches, and the follower gives each up after 1.5 s.
	kill -STOP "${BROKER_PIDS[$l]}"
	sleep 3.5
	kill -CONT "${BROKER_PIDS[$l]}"
	rep_wait 10 grep -q "fetching from broker $l again" "$TMP/broker-$f.log"
	[ "$(METRICS_PORT=${mp[$f]} metric klog_replica_fetch_timeouts_total 'phase="fetch"')" -ge 1 ]
	# One warning for the run of them.
	[ "$(grep -c "fetching from broker $l: no answer in 1500 ms" "$TMP/broker-$f.log")" -eq 1 ]
	METRICS_PORT=${mp[$f]} http GET /metrics | tail -n +3 | promtool check metrics
}
