#!/usr/bin/env bats
# TLS on the broker's listeners (klog-security(7)): SSL:// for the native
# and Kafka listeners, https:// for metrics, with certificates made here
# by openssl.  Real clients: kcat, curl and openssl s_client (kafka-python
# over TLS, and 1,000 stalled handshakes, are in 155-sasl.bats).

bats_require_minimum_version 1.5.0
load helpers
load kafka
load pki

setup() {
	common_setup
	unset KLOG_BROKERS KLOG_ZOOKEEPER KLOG_DATA_DIR
	make_pki
}

teardown() {
	common_teardown
}

# start_tls_broker [options]: native listener plaintext (for the native
# tools) unless -l says otherwise, Kafka over SSL:// (KAFKA), metrics over
# https:// (METRICS_PORT).
start_tls_broker() {
	KAFKA_PORT=$(free_port)
	KAFKA="127.0.0.1:$KAFKA_PORT"
	METRICS_PORT=$(free_port)
	start_broker --kafka-listen "SSL://$KAFKA" \
		--ssl-cert "$TMP/pki/server.pem" \
		--ssl-key "$TMP/pki/server.key" --ssl-ca "$TMP/pki/ca.pem" \
		--metrics-listen "https://127.0.0.1:$METRICS_PORT" "$@" &&
	wait_port "$KAFKA_PORT" 5
}

# kcs ARGS...: kcat over SSL, trusting the test CA.
kcs() {
	timeout 60 kcat -b "$KAFKA" -q -X security.protocol=ssl \
		-X ssl.ca.location="$TMP/pki/ca.pem" "$@"
}

@test "tls: kcat over SSL:// writes and reads 20,000 lines, in order; curl scrapes https://" {
	start_tls_broker --topic t:1
	seq 20000 | sed 's/$/ a line long enough to make the fetch span many TLS records/' \
		>"$TMP/in"
	kcs -P -t t -p 0 <"$TMP/in"
	run -0 kcs -C -t t -p 0 -o beginning -e
	diff <(printf '%s\n' "$output") "$TMP/in"
	# The same records through the plaintext native listener.
	run -0 klog-consume -t t -o beginning -e
	[ "${#lines[@]}" -eq 20000 ]
	run -0 curl -sS --cacert "$TMP/pki/ca.pem" \
		"https://127.0.0.1:$METRICS_PORT/metrics"
	[[ $output == *'klog_messages_in_total{topic="t",partition="0"} 20000'* ]]
	grep -q "Kafka listener on SSL://$KAFKA" "$TMP/broker.log"
	grep -q "metrics on https://127.0.0.1:$METRICS_PORT/metrics" "$TMP/broker.log"
}

@test "tls: openssl s_client verifies every listener; TLS 1.1 is refused" {
	local np kp mp p
	np=$(free_port) kp=$(free_port) mp=$(free_port)
	# Security protocols in any case, as Kafka takes them.
	klog-serve -d "$TMP/d" -l "SSL://127.0.0.1:$np" \
		--kafka-listen "ssl://127.0.0.1:$kp" \
		--metrics-listen "HTTPS://127.0.0.1:$mp" \
		--ssl-cert "$TMP/pki/server.pem" --ssl-key "$TMP/pki/server.key" \
		2>>"$TMP/broker.log" &
	PIDS+=("$!")
	wait_port "$np" 5 && wait_port "$kp" 5 && wait_port "$mp" 5
	for p in "$np" "$kp" "$mp"; do
		run -0 timeout 10 openssl s_client -connect "127.0.0.1:$p" \
			-CAfile "$TMP/pki/ca.pem" -verify_return_error </dev/null
		[[ $output == *"Verify return code: 0 (ok)"* ]]
	done
	run -0 timeout 10 openssl s_client -connect "127.0.0.1:$np" -tls1_2 \
		-CAfile "$TMP/pki/ca.pem" -verify_return_error </dev/null
	# The client allowed TLS 1.1 (its own floor lowered): the broker's
	# alert refuses it.
	run ! timeout 10 openssl s_client -connect "127.0.0.1:$np" -tls1_1 \
		-cipher 'DEFAULT:@SECLEVEL=0' </dev/null
	[[ $output == *"alert protocol version"* ]]
}

@test "tls: plaintext to a TLS port, and TLS to one not trusted, fail with the client's own error" {
	start_tls_broker --topic t:1
	# A plaintext Kafka client.
	run ! timeout 20 kcat -b "$KAFKA" -L -m 2
	# curl over http to the https port.
	run ! curl -sS --max-time 5 "http://127.0.0.1:$METRICS_PORT/metrics"
	# A client that trusts another CA.
	run ! timeout 20 kcat -b "$KAFKA" -L -m 2 -X security.protocol=ssl \
		-X ssl.ca.location="$TMP/pki/other.pem"
	[[ $output == *"certificate verify failed"* ]]
	# And the broker still serves a good one.
	run -0 kcs -L -t t
}

@test "tls: --ssl-client-auth required: no certificate or an untrusted one is refused; a signed one is let in" {
	start_tls_broker --ssl-client-auth required --topic t:1
	run ! timeout 20 kcat -b "$KAFKA" -L -m 2 -X security.protocol=ssl \
		-X ssl.ca.location="$TMP/pki/ca.pem"
	run ! timeout 20 kcat -b "$KAFKA" -L -m 2 -X security.protocol=ssl \
		-X ssl.ca.location="$TMP/pki/ca.pem" \
		-X ssl.certificate.location="$TMP/pki/stranger.pem" \
		-X ssl.key.location="$TMP/pki/stranger.key"
	run -0 kcs -L -t t -X ssl.certificate.location="$TMP/pki/writer.pem" \
		-X ssl.key.location="$TMP/pki/writer.key"
	[[ $output == *'topic "t" with 1 partitions'* ]]
	run -0 timeout 10 openssl s_client -connect "$KAFKA" \
		-CAfile "$TMP/pki/ca.pem" -cert "$TMP/pki/writer.pem" \
		-key "$TMP/pki/writer.key" -verify_return_error </dev/null
}

@test "tls: a new certificate is taken up without a restart; connections stay" {
	start_tls_broker --topic t:1
	local pid=$BROKER_PID s1
	# A connection open across the change.
	sleep 30 | openssl s_client -connect "$KAFKA" -CAfile "$TMP/pki/ca.pem" \
		>"$TMP/s1.out" 2>&1 &
	s1=$!
	PIDS+=("$s1")
	sleep 0.5
	# The same name, now from another CA (written aside, then renamed in).
	cert server2 localhost other
	mv "$TMP/pki/server2.key" "$TMP/pki/server.key.new"
	mv "$TMP/pki/server2.pem" "$TMP/pki/server.pem.new"
	mv "$TMP/pki/server.key.new" "$TMP/pki/server.key"
	mv "$TMP/pki/server.pem.new" "$TMP/pki/server.pem"
	wait_log 'TLS: certificate, key or CA changed' 15
	run -0 timeout 10 openssl s_client -connect "$KAFKA" \
		-CAfile "$TMP/pki/other.pem" -verify_return_error </dev/null
	kill -0 "$pid"
	kill -0 "$s1"	# the connection made before is still open
	grep -q 'Verify return code: 0' "$TMP/s1.out"
}

@test "tls: a key that is not the certificate's, a missing file, an unknown scheme or a bad --ssl-client-auth is refused at start" {
	run -64 klog-serve -d "$TMP/d" -l "FTP://127.0.0.1:0"
	[[ $output == *"unknown security protocol"* ]]
	run -64 klog-serve -d "$TMP/d" --ssl-client-auth sometimes
	[[ $output == *"want none, requested or required"* ]]
	run ! klog-serve -d "$TMP/d" -l "SSL://127.0.0.1:0"
	[[ $output == *"--ssl-cert and --ssl-key"* ]]
	run ! klog-serve -d "$TMP/d" -l "SSL://127.0.0.1:0" \
		--ssl-cert "$TMP/pki/server.pem" --ssl-key "$TMP/pki/writer.key"
	[[ $output == *"writer.key: not the certificate's PEM private key"* ]]
	run ! klog-serve -d "$TMP/d" -l "SSL://127.0.0.1:0" \
		--ssl-cert "$TMP/pki/missing.pem" --ssl-key "$TMP/pki/server.key"
	[[ $output == *"missing.pem"* ]]
	[ "${#lines[@]}" -eq 1 ]
}

@test "tls: the TLS files given in a config file, other keys after them, are the ones read" {
	KAFKA_PORT=$(free_port)
	KAFKA="127.0.0.1:$KAFKA_PORT"
	cat >"$TMP/serve.conf" <<-CONF
	ssl-cert = $TMP/pki/server.pem
	ssl-key = $TMP/pki/server.key
	ssl-ca = $TMP/pki/ca.pem
	kafka-listen = SSL://$KAFKA
	broker-id = 3
	CONF
	start_broker -c "$TMP/serve.conf" --topic t:1
	wait_port "$KAFKA_PORT" 5
	run -0 kcs -L -t t
	[[ $output == *'topic "t" with 1 partitions'* ]]
}

@test "tls: an expired certificate is refused, the broker's by its clients and a client's by the broker" {
	cert expired localhost ca -1
	# The broker's own expired: kcat and openssl say so.
	KAFKA_PORT=$(free_port)
	KAFKA="127.0.0.1:$KAFKA_PORT"
	start_broker --kafka-listen "SSL://$KAFKA" --topic t:1 \
		--ssl-cert "$TMP/pki/expired.pem" --ssl-key "$TMP/pki/expired.key"
	wait_port "$KAFKA_PORT" 5
	run ! timeout 20 kcat -b "$KAFKA" -X security.protocol=ssl \
		-X ssl.ca.location="$TMP/pki/ca.pem" -L -m 2
	[[ $output == *"SSL handshake failed"*"certificate verify failed"* ]]
	run ! timeout 10 openssl s_client -connect "$KAFKA" \
		-CAfile "$TMP/pki/ca.pem" -verify_return_error </dev/null
	[[ $output == *"certificate has expired"* ]]
}

@test "tls: an expired client certificate is refused where one is required" {
	cert expired writer ca -1
	start_tls_broker --topic t:1 --ssl-client-auth required
	run ! timeout 20 kcat -b "$KAFKA" -X security.protocol=ssl \
		-X ssl.ca.location="$TMP/pki/ca.pem" -L -m 2 \
		-X ssl.certificate.location="$TMP/pki/expired.pem" \
		-X ssl.key.location="$TMP/pki/expired.key"
	[[ $output == *"alert certificate expired"* ]]
	run -0 kcs -L -t t -X ssl.certificate.location="$TMP/pki/writer.pem" \
		-X ssl.key.location="$TMP/pki/writer.key"
	[[ $output == *'topic "t" with 1 partitions'* ]]
}
