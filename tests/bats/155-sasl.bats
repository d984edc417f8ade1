#!/usr/bin/env bats
# SASL on the Kafka listener (klog-security(7)): SCRAM-SHA-256,
# SCRAM-SHA-512 and PLAIN from the users file, with the real clients:
# kcat and confluent-kafka (librdkafka: SaslHandshake v1 and
# SaslAuthenticate) and kafka-python (SaslHandshake v0 and bare frames).

bats_require_minimum_version 1.5.0
load helpers
load kafka
load pki

setup() {
	common_setup
	unset KLOG_BROKERS KLOG_ZOOKEEPER KLOG_DATA_DIR
	make_pki
	printf 'alice-secret' | klog-group --users "$TMP/users" users add \
		--mechanism all alice >/dev/null
}

teardown() {
	common_teardown
}

# start_sasl_broker PROTOCOL [options]: the Kafka listener on
# PROTOCOL:// (SASL_SSL or SASL_PLAINTEXT) at KAFKA, users from
# $TMP/users.
start_sasl_broker() {
	local proto=$1
	shift
	KAFKA_PORT=$(free_port)
	KAFKA="127.0.0.1:$KAFKA_PORT"
	start_broker --kafka-listen "$proto://$KAFKA" --users "$TMP/users" \
		--ssl-cert "$TMP/pki/server.pem" --ssl-key "$TMP/pki/server.key" \
		"$@" && wait_port "$KAFKA_PORT" 5
}

# ksasl MECHANISM USER PASSWORD ARGS...: kcat over SASL_SSL, quiet unless
# LOUD is set.
ksasl() {
	local m=$1 u=$2 p=$3
	shift 3
	timeout 20 kcat -b "$KAFKA" ${LOUD--q} -X security.protocol=sasl_ssl \
		-X ssl.ca.location="$TMP/pki/ca.pem" -X sasl.mechanisms="$m" \
		-X sasl.username="$u" -X sasl.password="$p" "$@"
}

@test "sasl: kcat logs in over SASL_SSL with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512, writes and reads" {
	# The files and mechanisms from a config file, as from flags.
	cat >"$TMP/klog.conf" <<-EOF
	ssl-cert = $TMP/pki/server.pem
	ssl-key = $TMP/pki/server.key
	users = $TMP/users
	sasl-mechanisms = PLAIN,SCRAM-SHA-256,SCRAM-SHA-512
	EOF
	KAFKA_PORT=$(free_port)
	KAFKA="127.0.0.1:$KAFKA_PORT"
	start_broker -c "$TMP/klog.conf" --kafka-listen "SASL_SSL://$KAFKA" \
		--topic t:1
	wait_port "$KAFKA_PORT" 5
	grep -q "Kafka listener on SASL_SSL://$KAFKA" "$TMP/broker.log"
	grep -q "users: $TMP/users: 2 credentials" "$TMP/broker.log"
	for m in PLAIN SCRAM-SHA-256 SCRAM-SHA-512; do
		echo "by $m" | ksasl "$m" alice alice-secret -P -t t -p 0
	done
	run -0 ksasl SCRAM-SHA-512 alice alice-secret -C -t t -p 0 \
		-o beginning -e
	[ "$output" = $'by PLAIN\nby SCRAM-SHA-256\nby SCRAM-SHA-512' ]
}

@test "sasl: a wrong password and an unknown user read alike, for each mechanism, and nothing of them is logged" {
	start_sasl_broker SASL_SSL --topic t:1 \
		--sasl-mechanisms PLAIN,SCRAM-SHA-256,SCRAM-SHA-512
	local m wrong unknown
	for m in PLAIN SCRAM-SHA-256 SCRAM-SHA-512; do
		LOUD= run ! ksasl "$m" alice wrong -L -m 1
		wrong=$(printf '%s\n' "$output" | grep -m1 'SASL authentication error' |
			sed 's/^%3|[0-9.]*|//; s/ (after [^)]*)$//')
		LOUD= run ! ksasl "$m" mallory alice-secret -L -m 1
		unknown=$(printf '%s\n' "$output" | grep -m1 'SASL authentication error' |
			sed 's/^%3|[0-9.]*|//; s/ (after [^)]*)$//')
		[ -n "$wrong" ]
		[ "$wrong" = "$unknown" ]
	done
	[[ $wrong == *"invalid credentials with SASL mechanism SCRAM-SHA-512"* ]]
	# No credential, no token, no password in the broker's log.
	run ! grep -e alice-secret -e wrong "$TMP/broker.log"
}

@test "sasl: kafka-python (handshake v0, bare frames) and confluent-kafka log in; a wrong password is NoBrokersAvailable" {
	start_sasl_broker SASL_SSL --topic t:1 \
		--sasl-mechanisms PLAIN,SCRAM-SHA-256,SCRAM-SHA-512
	cat >"$TMP/kp.py" <<-'PYEOF'
	import sys
	from kafka import KafkaProducer, KafkaConsumer
	from kafka.errors import NoBrokersAvailable
	broker, ca, mech, pw = sys.argv[1:5]
	kw = dict(bootstrap_servers=broker, security_protocol='SASL_SSL',
	          ssl_cafile=ca, sasl_mechanism=mech,
	          sasl_plain_username='alice', sasl_plain_password=pw)
	try:
	    p = KafkaProducer(**kw)
	except NoBrokersAvailable:
	    print('NoBrokersAvailable')
	    sys.exit(3)
	p.send('t', b'python ' + mech.encode()).get(timeout=20)
	p.close()
	c = KafkaConsumer('t', auto_offset_reset='earliest',
	                  consumer_timeout_ms=3000, **kw)
	print(b' '.join(m.value for m in c).decode())
	PYEOF
	run -0 timeout 60 "$PY" "$TMP/kp.py" "$KAFKA" "$TMP/pki/ca.pem" \
		SCRAM-SHA-256 alice-secret
	[ "$output" = "python SCRAM-SHA-256" ]
	run -0 timeout 60 "$PY" "$TMP/kp.py" "$KAFKA" "$TMP/pki/ca.pem" \
		PLAIN alice-secret
	[ "$output" = "python SCRAM-SHA-256 python PLAIN" ]
	run -3 timeout 60 "$PY" "$TMP/kp.py" "$KAFKA" "$TMP/pki/ca.pem" \
		SCRAM-SHA-512 wrong
	[ "$output" = NoBrokersAvailable ]
	run -0 timeout 60 "$PY" - "$KAFKA" "$TMP/pki/ca.pem" <<-'PYEOF'
	import sys
	from confluent_kafka import Producer, Consumer
	conf = {'bootstrap.servers': sys.argv[1], 'security.protocol': 'SASL_SSL',
	        'ssl.ca.location': sys.argv[2], 'sasl.mechanisms': 'SCRAM-SHA-512',
	        'sasl.username': 'alice', 'sasl.password': 'alice-secret'}
	p = Producer(conf)
	p.produce('t', b'confluent')
	assert p.flush(20) == 0
	c = Consumer(dict(conf, **{'group.id': 'g', 'auto.offset.reset': 'earliest'}))
	c.subscribe(['t'])
	got = []
	while len(got) < 3:
	    m = c.poll(10)
	    assert m is not None and m.error() is None, m and m.error()
	    got.append(m.value().decode())
	c.close()
	print(' '.join(got))
	PYEOF
	[ "$output" = "python SCRAM-SHA-256 python PLAIN confluent" ]
}

@test "sasl: no credentials, a request before logging in, a 100 MB first frame: closed" {
	start_sasl_broker SASL_PLAINTEXT --topic t:1
	# kcat without SASL sends ApiVersions, then Metadata: closed.
	run ! timeout 20 kcat -b "$KAFKA" -L -m 3
	[[ $output == *"Failed to acquire metadata"* ]]
	wait_log "Kafka listener: a request before authentication" 5
	# A first frame announcing 100 MB: closed at once, nothing read
	# (a second later: refusals are logged once a second).
	sleep 1.1
	run -0 timeout 10 "$PY" - "$KAFKA_PORT" <<-'PYEOF'
	import socket, struct, sys, time
	s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))
	s.sendall(struct.pack('>i', 100 << 20) + b'\0' * 64)
	s.settimeout(5)
	t = time.time()
	assert s.recv(1) == b''
	print('closed after %.1f s' % (time.time() - t))
	PYEOF
	[[ $output == "closed after 0."* ]]
	grep -q "a request over 512 KiB before authentication" "$TMP/broker.log"
}

@test "sasl: 1,000 clients that stall in TLS or before logging in cost bounded memory, do not delay a login, and are closed after 10 s" {
	start_sasl_broker SASL_SSL --topic t:1
	local rss0 rss1
	rss0=$(awk '/^VmRSS/ { print $2 }' "/proc/$BROKER_PID/status")
	"$PY" - "$KAFKA_PORT" "$TMP/pki/ca.pem" >"$TMP/stall.out" <<-'PYEOF' &
	import resource, socket, ssl, sys, time
	resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))
	port, ca = int(sys.argv[1]), sys.argv[2]
	ctx = ssl.create_default_context(cafile=ca)
	socks = []
	for i in range(1000):
	    s = socket.create_connection(('127.0.0.1', port))
	    if i % 2:
	        s.send(b'\x16\x03\x01')   # half a ClientHello, then nothing
	    else:                           # TLS done, no login
	        s = ctx.wrap_socket(s, server_hostname='localhost')
	    socks.append(s)
	print('open', flush=True)
	t = time.time()
	for s in socks:
	    s.settimeout(20)
	    try:
	        assert s.recv(1) == b''
	    except (ConnectionResetError, ssl.SSLError):
	        pass
	print('closed after %.0f s' % (time.time() - t), flush=True)
	PYEOF
	local stall=$!
	PIDS+=("$stall")
	local n=200
	until grep -q open "$TMP/stall.out"; do
		n=$((n - 1)); [ "$n" -gt 0 ]; sleep 0.1
	done
	rss1=$(awk '/^VmRSS/ { print $2 }' "/proc/$BROKER_PID/status")
	# About 43 KiB a handshake at most (klog-security(7)): 1,000 in
	# well under 100 MB.
	echo "RSS ${rss0} kB -> ${rss1} kB" >&3
	[ $((rss1 - rss0)) -lt 100000 ]
	echo x | ksasl SCRAM-SHA-256 alice alice-secret -P -t t
	wait "$stall"
	grep -q 'closed after 1[0-9] s' "$TMP/stall.out"
	run -0 ksasl SCRAM-SHA-512 alice alice-secret -C -t t -e
	[ "$output" = x ]
}

@test "sasl: a user added to the file logs in without a restart; a bad file keeps the users read" {
	start_sasl_broker SASL_SSL --topic t:1
	run ! ksasl SCRAM-SHA-256 bob bob-secret -L -m 2
	printf 'bob-secret' | klog-group --users "$TMP/users" users add bob \
		>/dev/null
	wait_log "users: $TMP/users changed: 4 credentials" 5
	run -0 ksasl SCRAM-SHA-256 bob bob-secret -L -t t
	[[ $output == *'topic "t" with 1 partitions'* ]]
	echo 'garbage' >>"$TMP/users"
	wait_log "keeping the users read before" 5
	run -0 ksasl SCRAM-SHA-256 bob bob-secret -L -t t
}

@test "sasl: refused at start: PLAIN over SASL_PLAINTEXT, SASL without --users, a readable users file, an unknown mechanism" {
	local p
	p=$(free_port)
	run -64 klog-serve -d "$TMP/d" -l 127.0.0.1:0 \
		--kafka-listen "SASL_PLAINTEXT://127.0.0.1:$p" --users "$TMP/users" \
		--sasl-mechanisms PLAIN
	[[ $output == *"PLAIN would send passwords in clear"* ]]
	run -64 klog-serve -d "$TMP/d" -l 127.0.0.1:0 \
		--kafka-listen "SASL_PLAINTEXT://127.0.0.1:$p"
	[[ $output == *"no --users file"* ]]
	chmod 0644 "$TMP/users"
	run -64 klog-serve -d "$TMP/d" -l 127.0.0.1:0 \
		--kafka-listen "SASL_PLAINTEXT://127.0.0.1:$p" --users "$TMP/users"
	[[ $output == *"$TMP/users"* ]]
	run -64 klog-serve -d "$TMP/d" --sasl-mechanisms GSSAPI
	[[ $output == *"GSSAPI: not a SASL mechanism"* ]]
	# SaslHandshake on a listener without SASL: ILLEGAL_SASL_STATE.
	start_kafka_broker --topic t:1
	run ! timeout 20 kcat -b "$KAFKA" -X security.protocol=sasl_plaintext \
		-X sasl.mechanisms=SCRAM-SHA-256 -X sasl.username=alice \
		-X sasl.password=alice-secret -L -m 3
	[[ $output == *"Illegal SASL state"* || $output == *"SASL"* ]]
}

# native.py PORT TLS STEPS...: klog's wire by hand (klog-protocol(7)):
# each step "auth MECH TOKEN" (TOKEN with \0 for NUL) or "meta", printed
# as "api error" per answer, "closed" at the end of the stream.
native_py() {
	timeout 30 "$PY" - "$@" <<-'PYEOF'
	import socket, ssl, struct, sys
	port, tls, ca = int(sys.argv[1]), sys.argv[2] == 'tls', sys.argv[3]
	s = socket.create_connection(('127.0.0.1', port))
	if tls:
	    ctx = ssl.create_default_context(cafile=ca)
	    s = ctx.wrap_socket(s, server_hostname='localhost')
	def recv(n):
	    b = b''
	    while len(b) < n:
	        c = s.recv(n - len(b))
	        if not c:
	            return None
	        b += c
	    return b
	for i, step in enumerate(sys.argv[4:]):
	    w = step.split(' ', 2)
	    if w[0] == 'auth':
	        tok = w[2].encode().replace(b'\\0', b'\0')
	        body = struct.pack('>h', len(w[1])) + w[1].encode() + \
	            struct.pack('>i', len(tok)) + tok
	        api = 11
	    else:
	        body, api = struct.pack('>i', 0), 5
	    s.sendall(struct.pack('>ihhi', 8 + len(body), api, 1, i) + body)
	    h = recv(10)
	    if h is None:
	        print('closed')
	        sys.exit(0)
	    size, corr, err = struct.unpack('>iih', h)
	    recv(size - 6)
	    print(api, err)
	s.settimeout(1)
	try:
	    print('closed' if recv(1) is None else 'more')
	except (socket.timeout, ssl.SSLError):
	    print('open')
	PYEOF
}

@test "sasl: the native listener's AUTHENTICATE: PLAIN over SASL_SSL, and the refusals" {
	local np pp
	np=$(free_port) pp=$(free_port)
	klog-serve -d "$TMP/d" -l "SASL_SSL://127.0.0.1:$np" --topic t:1 \
		--users "$TMP/users" --sasl-mechanisms PLAIN,SCRAM-SHA-256 \
		--ssl-cert "$TMP/pki/server.pem" --ssl-key "$TMP/pki/server.key" \
		2>>"$TMP/broker.log" &
	PIDS+=("$!")
	klog-serve -d "$TMP/d2" -l "127.0.0.1:$pp" 2>>"$TMP/broker.log" &
	PIDS+=("$!")
	wait_port "$np" 5 && wait_port "$pp" 5
	grep -q "listening on SASL_SSL://127.0.0.1:$np" "$TMP/broker.log"
	local ca=$TMP/pki/ca.pem
	# Logged in, the same connection is served.
	run -0 native_py "$np" tls "$ca" 'auth PLAIN \0alice\0alice-secret' meta
	[ "$output" = $'11 0\n5 0\nopen' ]
	# Anything first: AUTHENTICATION_REQUIRED, closed.
	run -0 native_py "$np" tls "$ca" meta
	[ "$output" = $'5 24\nclosed' ]
	# A wrong password: AUTHENTICATION_FAILED, closed.
	run -0 native_py "$np" tls "$ca" 'auth PLAIN \0alice\0wrong' meta
	[ "$output" = $'11 25\nclosed' ]
	# A mechanism not offered.
	run -0 native_py "$np" tls "$ca" 'auth SCRAM-SHA-512 n,,n=alice,r=abc'
	[ "$output" = $'11 26\nclosed' ]
	# SCRAM's first round answers; another mechanism midway does not.
	run -0 native_py "$np" tls "$ca" 'auth SCRAM-SHA-256 n,,n=alice,r=abc' \
		'auth PLAIN \0alice\0alice-secret'
	[ "$output" = $'11 0\n11 27\nclosed' ]
	# AUTHENTICATE where no login is asked.
	run -0 native_py "$pp" plain "$ca" 'auth PLAIN \0alice\0alice-secret'
	[ "$output" = $'11 27\nclosed' ]
	run -0 native_py "$pp" plain "$ca" meta
	[ "$output" = $'5 0\nopen' ]
}
