#!/usr/bin/env bats
# klog's own tools over TLS (klog-security(7)): klog-produce, klog-consume
# and klog-group with librdkafka's properties from -X and -F (the file
# kcat -F reads too), the refusals with exit status 77, a client
# certificate required, plaintext to a TLS port.  A replicated cluster
# whose followers fetch over TLS with their own certificates is in
# 157-secure-cluster.bats.  Certificates are made here by openssl
# (pki.bash).

bats_require_minimum_version 1.5.0
load helpers
load pki

setup() {
	common_setup
	unset KLOG_BROKERS KLOG_ZOOKEEPER KLOG_DATA_DIR KLOG_SASL_PASSWORD
	make_client_pki
}

teardown() {
	common_teardown
}

# pki's certificates, a server certificate naming localhost alone, and
# the properties file of the writer's certificate, for klog's tools and
# kcat alike.
make_client_pki() {
	make_pki &&
	openssl req -newkey rsa:2048 -nodes -keyout "$TMP/pki/nameonly.key" \
		-out "$TMP/pki/nameonly.csr" -subj "/CN=localhost" 2>/dev/null &&
	printf 'subjectAltName=DNS:localhost\n' >"$TMP/pki/ext-dns" &&
	openssl x509 -req -in "$TMP/pki/nameonly.csr" -CA "$TMP/pki/ca.pem" \
		-CAkey "$TMP/pki/ca.key" -CAcreateserial -days 2 \
		-extfile "$TMP/pki/ext-dns" -out "$TMP/pki/nameonly.pem" \
		2>/dev/null || return 1
	P=$TMP/pki
	printf '%s\n' '# TLS to the test brokers' '' \
		'security.protocol=SSL' "ssl.ca.location=$P/ca.pem" \
		"ssl.certificate.location=$P/writer.pem" \
		"ssl.key.location=$P/writer.key" >"$TMP/client.properties"
}

# tls_broker [options]: a standalone broker whose native listener is
# SSL:// (KLOG_BROKERS, BROKER_PORT), its Kafka listener too (KAFKA).
tls_broker() {
	BROKER_PORT=$(free_port)
	KAFKA="127.0.0.1:$(free_port)"
	export KLOG_BROKERS="127.0.0.1:$BROKER_PORT"
	klog-serve -d "$TMP/broker-data" -l "SSL://$KLOG_BROKERS" \
		--kafka-listen "SSL://$KAFKA" --ssl-cert "${CERT:-$P/server.pem}" \
		--ssl-key "${KEY:-$P/server.key}" --ssl-ca "$P/ca.pem" "$@" \
		2>>"$TMP/broker.log" &
	BROKER_PID=$!
	PIDS+=("$BROKER_PID")
	wait_port "$BROKER_PORT" 5 && wait_port "${KAFKA#*:}" 5 || {
		cat "$TMP/broker.log" >&2
		return 1
	}
}

# The -X words of TLS trusting the test CA.
SSL=(-X security.protocol=ssl)

@test "tls clients: produce, consume and group over SSL:// with -X and -F; kcat -F reads the same file" {
	tls_broker
	run -0 klog-group -b "$KLOG_BROKERS" "${SSL[@]}" \
		-X "ssl.ca.location=$P/ca.pem" create-topic -t t --partitions 2
	seq 20000 | sed 's/$/ a line long enough to span many TLS records/' \
		>"$TMP/in"
	run -0 klog-produce -t t -a all "${SSL[@]}" \
		-X "ssl.ca.location=$P/ca.pem" <"$TMP/in"
	klog-consume -t t -o beginning -e -F "$TMP/client.properties" |
		sort -n >"$TMP/out"
	cmp "$TMP/in" "$TMP/out"
	# The same file, as kcat takes it, on the Kafka listener.
	run -0 --separate-stderr timeout 60 kcat -b "$KAFKA" \
		-F "$TMP/client.properties" -q -C -t t -o beginning -e
	[ "${#lines[@]}" -eq 20000 ]
	# klog-consume -L and klog-group over the same file.
	run -0 klog-consume -L -F "$TMP/client.properties"
	[[ $output == *t* ]]
	run -0 klog-group -b "$KLOG_BROKERS" -F "$TMP/client.properties" \
		delete-topic -t t
}

@test "tls clients: kcat's record batches come back over SSL:// from the segment file, read and encrypted" {
	local mport
	mport=$(free_port)
	tls_broker --topic b:1 --metrics-listen "127.0.0.1:$mport"
	seq 40000 | sed 's/$/ a line long enough to span many TLS records/' \
		>"$TMP/in"
	timeout 60 kcat -b "$KAFKA" -F "$TMP/client.properties" -q -P -t b \
		-p 0 <"$TMP/in"
	timeout 60 kcat -b "$KAFKA" -F "$TMP/client.properties" -q -C -t b \
		-p 0 -o beginning -e | cmp - "$TMP/in"
	run -0 curl -sf "http://127.0.0.1:$mport/metrics"
	[[ $output =~ klog_kafka_fetch_bytes_total\{from=\"file\"\}\ [1-9][0-9]{5} ]]
	klog-consume -t b -o beginning -e -F "$TMP/client.properties" |
		cmp - "$TMP/in"
}

@test "tls clients: a CA not trusted, or a certificate not naming the host, is one line and exit 77" {
	tls_broker --topic t:1
	for tool in consume produce group; do
		case $tool in
		consume) cmd=(klog-consume -t t -e) ;;
		produce) cmd=(klog-produce -t t) ;;
		group) cmd=(klog-group -b "$KLOG_BROKERS" create-topic -t u
		    --partitions 1) ;;
		esac
		run -77 --separate-stderr "${cmd[@]}" "${SSL[@]}" \
			-X "ssl.ca.location=$P/other.pem" </dev/null
		[ "${#stderr_lines[@]}" -eq 1 ]
		[[ $stderr == "klog-$tool: 127.0.0.1:$BROKER_PORT: TLS: certificate verify failed: "* ]]
	done
	# A certificate for localhost only, dialled as 127.0.0.1: refused
	# unless ssl.endpoint.identification.algorithm=none; as localhost,
	# let in.
	common_teardown
	TMP=$(mktemp -d "${BATS_TMPDIR:-/tmp}/klog.XXXXXX")
	PIDS=()
	make_client_pki
	CERT=$P/nameonly.pem KEY=$P/nameonly.key tls_broker --topic t:1
	run -77 --separate-stderr klog-consume -t t -e "${SSL[@]}" \
		-X "ssl.ca.location=$P/ca.pem"
	[[ $stderr == *"certificate verify failed: IP address mismatch"* ]]
	run -0 klog-consume -t t -e "${SSL[@]}" -X "ssl.ca.location=$P/ca.pem" \
		-X ssl.endpoint.identification.algorithm=none
	run -0 klog-consume -b "localhost:$BROKER_PORT" -t t -e "${SSL[@]}" \
		-X "ssl.ca.location=$P/ca.pem"
}

@test "tls clients: --ssl-client-auth required: no certificate or a foreign one exits 77, the CA's is let in" {
	tls_broker --ssl-client-auth required --topic t:1
	run -77 --separate-stderr klog-consume -t t -e "${SSL[@]}" \
		-X "ssl.ca.location=$P/ca.pem"
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == *"certificate required"* ]]
	run -77 --separate-stderr klog-produce -t t "${SSL[@]}" \
		-X "ssl.ca.location=$P/ca.pem" \
		-X "ssl.certificate.location=$P/stranger.pem" \
		-X "ssl.key.location=$P/stranger.key" <<<"x"
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == *"unknown ca"* ]]
	run -0 klog-produce -t t -F "$TMP/client.properties" <<<"signed"
	run -0 klog-consume -t t -o beginning -e -F "$TMP/client.properties"
	[ "$output" = signed ]
}

@test "tls clients: plaintext to a TLS port, and TLS to a plaintext one, fail in one line" {
	tls_broker --topic t:1
	run ! --separate-stderr timeout 30 klog-consume -t t -e -m 2s
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == "klog-consume: 127.0.0.1:$BROKER_PORT: "* ]]
	# A TLS client to a plaintext listener.
	port=$(free_port)
	klog-serve -d "$TMP/plain-data" -l "127.0.0.1:$port" --topic t:1 \
		2>>"$TMP/plain.log" &
	PIDS+=("$!")
	wait_port "$port" 5
	run ! --separate-stderr timeout 30 klog-consume -b "127.0.0.1:$port" \
		-t t -e -m 2s -F "$TMP/client.properties"
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == "klog-consume: 127.0.0.1:$port: TLS: "* ]]
	# The broker is still there for a plaintext client.
	run -0 klog-consume -b "127.0.0.1:$port" -t t -e
}

@test "tls clients: properties refused in one line, exit 64, never echoing a password" {
	run -64 --separate-stderr klog-produce -t t -X bootstrap.servers=h:1
	[[ ${stderr_lines[0]} == "klog-produce: -X bootstrap.servers: unknown property"* ]]
	[ "${stderr_lines[1]}" = "Try 'klog-produce -h'" ]
	run -64 --separate-stderr klog-consume -t t -X sasl.passwd=hunter2
	[[ $stderr != *hunter2* ]]
	run -64 --separate-stderr klog-group -b 127.0.0.1:1 \
		-X security.protocol=gss create-topic -t t --partitions 1
	[[ ${stderr_lines[0]} == *"want plaintext, ssl, sasl_plaintext or sasl_ssl"* ]]
	printf 'security.protocol=ssl\nlinger.ms=5\n' >"$TMP/bad.properties"
	run -64 --separate-stderr klog-consume -t t -F "$TMP/bad.properties"
	[[ ${stderr_lines[0]} == "klog-consume: -F $TMP/bad.properties:2: linger.ms: unknown property"* ]]
	run -64 --separate-stderr klog-consume -t t -F "$TMP/none.properties"
	[[ ${stderr_lines[0]} == *"none.properties"* ]]
	# SASL needs a password, which the environment may give.
	run -64 --separate-stderr klog-consume -t t \
		-X security.protocol=sasl_plaintext -X sasl.mechanism=PLAIN \
		-X sasl.username=alice
	[[ ${stderr_lines[0]} == *"needs sasl.password"* ]]
	run -64 --separate-stderr klog-consume -t t \
		-X security.protocol=ssl -X ssl.ca.location=/nonexistent/ca.pem
	[[ ${stderr_lines[0]} == *"/nonexistent/ca.pem"* ]]
}

@test "tls clients: SASL from \$KLOG_SASL_PASSWORD; a listener without SASL refuses AUTHENTICATE, exit 77" {
	tls_broker --topic t:1
	export KLOG_SASL_PASSWORD=alice-secret
	run -77 --separate-stderr klog-consume -t t -e -F "$TMP/client.properties" \
		-X security.protocol=sasl_ssl -X sasl.mechanisms=SCRAM-SHA-256 \
		-X sasl.username=alice
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == "klog-consume: 127.0.0.1:$BROKER_PORT: authentication failed: "* ]]
	[[ $stderr != *alice-secret* ]]
}
