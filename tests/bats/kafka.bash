# Shared by the Kafka listener's suites: a broker with both listeners,
# and Debian's Kafka clients (kcat, python3-kafka, python3-confluent-kafka)
# driven against it.  Debian's python3 packages import under
# /usr/bin/python3, whatever python3 comes first on PATH.

PY=/usr/bin/python3

# start_kafka_broker [klog-serve options...]: start_broker with a Kafka
# listener on a free port too; sets KAFKA_PORT and KAFKA.
start_kafka_broker() {
	KAFKA_PORT=$(free_port)
	KAFKA="127.0.0.1:$KAFKA_PORT"
	start_broker --kafka-listen "$KAFKA" "$@" || return 1
	wait_port "$KAFKA_PORT" 5 || {
		cat "$TMP/broker.log" >&2
		return 1
	}
}

# kc ARGS...: kcat against the listener, bounded in time, quiet.
kc() {
	timeout 60 kcat -b "$KAFKA" -q "$@"
}
