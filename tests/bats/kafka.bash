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

# entry_kinds SEGMENT: each entry's magic and codec ("2/1": a gzip record
# batch), one a line, read from the segment's bytes (not klog-dump's
# output, whose format is its own).
entry_kinds() {
	python3 - "$1" <<-'EOF2'
	import struct, sys
	data = open(sys.argv[1], "rb").read()
	pos = 0
	while pos + 6 <= len(data):
	    n, magic, attrs = struct.unpack(">IBB", data[pos:pos + 6])
	    print("%d/%d" % (magic, attrs & 7 if magic else 0))
	    pos += 4 + n
	EOF2
}
