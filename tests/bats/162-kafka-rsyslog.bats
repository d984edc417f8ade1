#!/usr/bin/env bats
# rsyslog's omkafka (Debian's rsyslog-kafka, on librdkafka) shipping to
# the Kafka listener: our own rsyslogd, on a config of its own in the
# test's temp dir, reads a file with imfile (no system socket, no
# /dev/log) and forwards each line to a topic, as the shipper users run.

bats_require_minimum_version 1.5.0
load helpers
load kafka

setup() {
	common_setup
	unset KLOG_BROKERS KLOG_ZOOKEEPER KLOG_DATA_DIR
	[ -x /usr/sbin/rsyslogd ] || skip "no rsyslogd (Debian package rsyslog)"
	[ -e /usr/lib/x86_64-linux-gnu/rsyslog/omkafka.so ] ||
		[ -n "$(find /usr/lib -name omkafka.so 2>/dev/null)" ] ||
		skip "no omkafka (Debian package rsyslog-kafka)"
}

teardown() {
	common_teardown
}

# start_rsyslog ACTION...: rsyslogd in the foreground on $TMP/rs.conf,
# reading $TMP/in.log (tag app) and sending it through each omkafka
# ACTION (the text inside action(...) after type and broker), the line
# alone as the message.  Its pid goes in PIDS; it returns once imfile
# watches the file.  With RS_DEBUG set, rsyslogd's debug log (where
# omkafka puts librdkafka's) goes to $TMP/rs-debug.
start_rsyslog() {
	local a
	mkdir -p "$TMP/rs-work"
	: >"$TMP/in.log"
	{
		echo "global(workDirectory=\"$TMP/rs-work\")"
		echo 'module(load="imfile")'
		echo 'module(load="omkafka")'
		echo 'template(name="line" type="string" string="%msg%")'
		echo "input(type=\"imfile\" file=\"$TMP/in.log\" tag=\"app\")"
		for a in "$@"; do
			echo "action(type=\"omkafka\" broker=[\"$KAFKA\"] template=\"line\" $a)"
		done
	} >"$TMP/rs.conf"
	RSYSLOG_DEBUG=NoStdOut RSYSLOG_DEBUGLOG="$TMP/rs-debug" \
		/usr/sbin/rsyslogd -n ${RS_DEBUG:+-d} -f "$TMP/rs.conf" \
		-i "$TMP/rs.pid" >>"$TMP/rs.log" 2>&1 &
	PIDS+=("$!")
	RS_PID=$!
	wait_fd "$RS_PID" "$TMP/in.log" 10
}

# wait_fd PID FILE SECONDS: until process PID has FILE open.
wait_fd() {
	local n=$(( $3 * 20 ))
	until ls -l "/proc/$1/fd" 2>/dev/null | grep -q " -> $2\$"; do
		n=$((n - 1))
		if [ "$n" -eq 0 ] || ! kill -0 "$1" 2>/dev/null; then
			cat "$TMP/rs.log" >&2
			return 1
		fi
		sleep 0.05
	done
}

# wait_count TOPIC N SECONDS: until the topic holds at least N messages.
wait_count() {
	local n=$(( $3 * 10 ))
	until [ "$(klog-consume -t "$1" -o beginning -e 2>/dev/null | wc -l)" -ge "$2" ]
	do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.1
	done
}

@test "kafka rsyslog: 1,000 lines through omkafka arrive in order, once each; klog-consume and kcat read them" {
	start_kafka_broker --topic syslog:1
	start_rsyslog 'topic="syslog"'
	seq 1000 >>"$TMP/in.log"
	wait_count syslog 1000 10
	klog-consume -t syslog -o beginning -e >"$TMP/native"
	cmp <(seq 1000) "$TMP/native"
	kc -C -t syslog -o beginning -e >"$TMP/kc"
	cmp <(seq 1000) "$TMP/kc"
}

@test "kafka rsyslog: omkafka with compression.codec zstd and snappy; librdkafka says it compressed" {
	start_kafka_broker --topic zs:1 --topic sn:1
	RS_DEBUG=1 start_rsyslog \
		'topic="zs" confParam=["compression.codec=zstd", "debug=msg"]' \
		'topic="sn" confParam=["compression.codec=snappy", "debug=msg"]'
	# One action's failure does not stop the other; both get every line.
	seq 1000 >>"$TMP/in.log"
	wait_count zs 1000 10
	wait_count sn 1000 10
	for t in zs sn; do
		klog-consume -t "$t" -o beginning -e | cmp <(seq 1000) -
		kc -C -t "$t" -o beginning -e | cmp <(seq 1000) -
	done
	grep -q 'zs \[0\]: Produce MessageSet with .*ApiVersion 7, .*zstd)' \
		"$TMP/rs-debug"
	grep -q 'sn \[0\]: Produce MessageSet with .*snappy)' "$TMP/rs-debug"
	! grep -q 'Produce MessageSet with .*uncompressed)' "$TMP/rs-debug"
	! grep -q 'UNSUPPORTED_COMPRESSION' "$TMP/rs-debug"
}

@test "kafka rsyslog: the broker restarted mid-stream: omkafka's queue delivers the rest, none lost" {
	start_kafka_broker --topic syslog:1
	# rsyslog's defaults drop what comes while the action is suspended
	# (action.resumeRetryCount 0); a queue and endless retries keep it.
	start_rsyslog 'topic="syslog" queue.type="LinkedList"
		action.resumeRetryCount="-1" action.resumeInterval="1"'
	seq 1000 >>"$TMP/in.log"
	wait_count syslog 1000 10
	seq 1001 1500 >>"$TMP/in.log"
	kill -TERM "$BROKER_PID"
	wait_gone "$BROKER_PID" 10
	seq 1501 2000 >>"$TMP/in.log"
	# Lines read while the broker is down wait in the queue.
	sleep 0.5
	start_broker --kafka-listen "$KAFKA"
	wait_count syslog 2000 15
	klog-consume -t syslog -o beginning -e >"$TMP/out"
	# At least once: a batch in flight at the kill may come again.
	sort -n -u "$TMP/out" | cmp <(seq 2000) -
	echo "# $(($(wc -l <"$TMP/out") - 2000)) duplicates" >&3
	# The first 1,000, sent before the kill, once each and in order.
	head -n 1000 "$TMP/out" | cmp <(seq 1000) -
}
