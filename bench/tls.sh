#!/bin/sh
# tls: the Kafka listener over SSL:// and SASL_SSL:// (SCRAM-SHA-512)
# beside PLAINTEXT://, with Debian's kcat (librdkafka) on the client side,
# on the same input: TLS_RECORDS records of 200 bytes (a line each).  Each
# run starts a fresh broker per variant, in an order turned by one each
# run:
#   produce  kcat -P -t T -p 0 -X acks=1 < file
#   consume  kcat -C -t T -p 0 -o 0 -e -X fetch.wait.max.ms=10 > /dev/null
# with -X security.protocol=ssl -X ssl.ca.location=CA for the SSL variant
# (sasl_ssl and a SCRAM-SHA-512 login for SASL_SSL),
# a certificate made here (RSA 2048, TLS 1.3 with AES-256-GCM as OpenSSL
# and librdkafka agree).  For each: MB/s (10^6 payload bytes), and CPU
# seconds per GB on each side: the broker's (utime + stime of its threads,
# /proc/PID/stat) and kcat's (its rusage).  The ratios SSL / PLAINTEXT of
# the rates are the targets: produce at least 0.7, consume at least 0.4.
#
# Over PLAINTEXT the Kafka listener reads and transcodes what it sends
# (klog-kafka(7)); over SSL it then encrypts it too.  There is no kTLS on
# this kernel, so nothing here is zero copy over TLS; the native listener
# over SSL:// would lose sendfile the same way (klog-security(7)).
#
# Then what a login costs the broker: TLS_LOGINS (default 2000) fresh
# connections one after another, each logging in with SCRAM-SHA-256
# (bench/scram_logins.py, which caches its own PBKDF2 as a client may), over
# SASL_PLAINTEXT:// and over SASL_SSL:// (with the TLS handshake, a full one
# each time: no session resumption); the broker's CPU per login and the
# logins one core of it would accept a second.
#
# Knobs: TLS_RECORDS (default 1000000) and TLS_LOGINS times BENCH_SCALE.
# Skipped without kcat or openssl.
. "$(dirname "$0")/lib.sh"

KCAT=${KCAT:-/usr/bin/kcat}
if [ ! -x "$KCAT" ] || ! command -v openssl >/dev/null; then
	note "tls: skipped (no kcat or openssl)"
	exit 0
fi
bench_setup tls
HZ=$(getconf CLK_TCK)

records=$(scaled "${TLS_RECORDS:-1000000}" 1000)
payload=$((records * 200))
records "$records" >"$WORK/input"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/ca.key" \
	-out "$WORK/ca.pem" -days 1 -subj "/CN=bench CA" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout "$WORK/srv.key" \
	-out "$WORK/srv.csr" -subj "/CN=localhost" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\n' >"$WORK/ext"
openssl x509 -req -in "$WORK/srv.csr" -CA "$WORK/ca.pem" \
	-CAkey "$WORK/ca.key" -CAcreateserial -days 1 -extfile "$WORK/ext" \
	-out "$WORK/srv.pem" 2>/dev/null
printf 'alice-secret' | "$ROOT/bin/klog-group" --users "$WORK/users" users add \
	alice >/dev/null
note "$records records of 200 bytes, $RUNS runs"

# tbroker VARIANT: a fresh broker whose Kafka listener is VARIANT
# (plain, ssl, sasl or sasl_plaintext).  Sets BROKER_PID and KAFKA.
tbroker() {
	_dir=$WORK/$1.$run
	_kport=$(free_port)
	case $1 in
	plain) _scheme= ;;
	ssl) _scheme=SSL:// ;;
	sasl) _scheme=SASL_SSL:// ;;
	*) _scheme=SASL_PLAINTEXT:// ;;
	esac
	: >"$_dir.log"
	"$SERVE" -d "$_dir" -l 127.0.0.1:0 \
		--kafka-listen "${_scheme}127.0.0.1:$_kport" \
		--ssl-cert "$WORK/srv.pem" --ssl-key "$WORK/srv.key" \
		--users "$WORK/users" 2>>"$_dir.log" &
	BROKER_PID=$!
	track "$BROKER_PID"
	KAFKA=127.0.0.1:$_kport
	_n=1000
	until grep -q "Kafka listener on ${_scheme}127.0.0.1:$_kport\$" \
	    "$_dir.log"; do
		_n=$((_n - 1))
		if [ "$_n" -eq 0 ] || ! kill -0 "$BROKER_PID" 2>/dev/null; then
			cat "$_dir.log" >&2
			echo "tls: klog-serve did not start" >&2
			exit 1
		fi
		sleep 0.01
	done
}

# kc VARIANT ARGS...: kcat against $KAFKA, over SSL for ssl; the seconds
# it took and the CPU seconds it used go to $WORK/kc.t ("wall cpu").
kc() {
	_v=$1
	shift
	if [ "$_v" = ssl ]; then
		set -- -X security.protocol=ssl \
			-X ssl.ca.location="$WORK/ca.pem" "$@"
	elif [ "$_v" = sasl ]; then
		set -- -X security.protocol=sasl_ssl \
			-X ssl.ca.location="$WORK/ca.pem" \
			-X sasl.mechanisms=SCRAM-SHA-512 -X sasl.username=alice \
			-X sasl.password=alice-secret "$@"
	fi
	python3 -c "$KC_PY" "$WORK/kc.t" "$KCAT" -b "$KAFKA" -q "$@"
}

# Runs argv[2:] with this process's stdin and stdout; writes "wall cpu"
# (seconds) to argv[1].
KC_PY='import resource, subprocess, sys, time
t0 = time.monotonic()
r = subprocess.run(sys.argv[2:])
wall = time.monotonic() - t0
u = resource.getrusage(resource.RUSAGE_CHILDREN)
if r.returncode != 0:
    sys.exit("tls: kcat failed: %d" % r.returncode)
open(sys.argv[1], "w").write("%.3f %.3f\n" % (wall, u.ru_utime + u.ru_stime))'

# one VARIANT: produce then consume on a fresh broker; appends the rates
# and CPU per GB to $WORK/{p,c}{mb,bcpu,kcpu}_VARIANT.
one() {
	tbroker "$1"
	_b0=$(cpu_ticks "$BROKER_PID")
	kc "$1" -P -t t -p 0 -X acks=1 <"$WORK/input" >/dev/null
	_r=$(cat "$WORK/kc.t")
	_b1=$(cpu_ticks "$BROKER_PID")
	kc "$1" -C -t t -p 0 -o 0 -e -X fetch.wait.max.ms=10 </dev/null \
		>"$WORK/out"
	_r2=$(cat "$WORK/kc.t")
	_b2=$(cpu_ticks "$BROKER_PID")
	[ "$(wc -l <"$WORK/out")" -eq "$records" ] || {
		echo "tls: $1: consumed $(wc -l <"$WORK/out") of $records" >&2
		exit 1
	}
	awk -v r="$_r" -v r2="$_r2" -v b0="$_b0" -v b1="$_b1" -v b2="$_b2" \
	    -v hz="$HZ" -v p="$payload" -v w="$WORK" -v v="$1" -v n="$run" 'BEGIN {
		split(r, a, " "); split(r2, c, " ")
		gb = p / 1e9
		printf "%.1f\n", p / a[1] / 1e6 >> (w "/pmb_" v)
		printf "%.1f\n", p / c[1] / 1e6 >> (w "/cmb_" v)
		printf "%.2f\n", (b1 - b0) / hz / gb >> (w "/pbcpu_" v)
		printf "%.2f\n", (b2 - b1) / hz / gb >> (w "/cbcpu_" v)
		printf "%.2f\n", a[2] / gb >> (w "/pkcpu_" v)
		printf "%.2f\n", c[2] / gb >> (w "/ckcpu_" v)
		printf "# run %d %s: produce %.1f MB/s, consume %.1f MB/s\n",
			n, v, p / a[1] / 1e6, p / c[1] / 1e6 }'
	broker_stop "$BROKER_PID"
	rm -rf "$WORK/$1.$run"
}

run=0
while [ "$run" -lt "$RUNS" ]; do
	case $((run % 3)) in
	0) one plain; one ssl; one sasl ;;
	1) one ssl; one sasl; one plain ;;
	*) one sasl; one plain; one ssl ;;
	esac
	run=$((run + 1))
done

for v in plain ssl sasl; do
	for m in pmb cmb pbcpu cbcpu pkcpu ckcpu; do
		eval "${m}_$v=\$(median <\"\$WORK/${m}_$v\")"
	done
done
say tls_produce_plain_mb_s "$pmb_plain" MB/s
say tls_produce_ssl_mb_s "$pmb_ssl" MB/s
say tls_consume_plain_mb_s "$cmb_plain" MB/s
say tls_consume_ssl_mb_s "$cmb_ssl" MB/s
say tls_produce_sasl_ssl_mb_s "$pmb_sasl" MB/s
say tls_consume_sasl_ssl_mb_s "$cmb_sasl" MB/s
say tls_produce_broker_cpu_plain "$pbcpu_plain" s/GB
say tls_produce_broker_cpu_ssl "$pbcpu_ssl" s/GB
say tls_consume_broker_cpu_plain "$cbcpu_plain" s/GB
say tls_consume_broker_cpu_ssl "$cbcpu_ssl" s/GB
say tls_produce_broker_cpu_sasl_ssl "$pbcpu_sasl" s/GB
say tls_consume_broker_cpu_sasl_ssl "$cbcpu_sasl" s/GB
say tls_produce_kcat_cpu_plain "$pkcpu_plain" s/GB
say tls_produce_kcat_cpu_ssl "$pkcpu_ssl" s/GB
say tls_consume_kcat_cpu_plain "$ckcpu_plain" s/GB
say tls_consume_kcat_cpu_ssl "$ckcpu_ssl" s/GB
pr=$(ratio "$pmb_ssl" "$pmb_plain")
cr=$(ratio "$cmb_ssl" "$cmb_plain")
say tls_produce_ratio "$pr" x
say tls_consume_ratio "$cr" x
target "produce over SSL / PLAINTEXT" "$pr" ">=" 0.7 x
target "consume over SSL / PLAINTEXT" "$cr" ">=" 0.4 x
say tls_produce_sasl_ratio "$(ratio "$pmb_sasl" "$pmb_plain")" x
say tls_consume_sasl_ratio "$(ratio "$cmb_sasl" "$cmb_plain")" x

# logins VARIANT: TLS_LOGINS logins on a fresh broker; appends the
# broker's CPU microseconds per login and the wall milliseconds per login.
logins() {
	tbroker "$1"
	_t0=$(cpu_ticks "$BROKER_PID")
	_w=$(/usr/bin/python3 "$ROOT/bench/scram_logins.py" 127.0.0.1 \
		"${KAFKA#*:}" alice alice-secret "$nlogins" \
		"$([ "$1" = sasl ] && echo 1 || echo 0)" "$WORK/ca.pem")
	_t1=$(cpu_ticks "$BROKER_PID")
	awk -v t0="$_t0" -v t1="$_t1" -v hz="$HZ" -v n="$nlogins" \
	    -v w="$_w" -v d="$WORK" -v v="$1" -v r="$run" 'BEGIN {
		us = (t1 - t0) / hz / n * 1e6
		printf "%.0f\n", us >> (d "/lus_" v)
		printf "%.2f\n", w / n * 1000 >> (d "/lms_" v)
		printf "# run %d %s: %d logins, broker %.0f us each, %.2f ms wall\n",
			r, v, n, us, w / n * 1000 }'
	broker_stop "$BROKER_PID"
	rm -rf "$WORK/$1.$run"
}

nlogins=$(scaled "${TLS_LOGINS:-2000}" 20)
run=0
while [ "$run" -lt "$RUNS" ]; do
	if [ $((run % 2)) -eq 0 ]; then logins sasl_plaintext; logins sasl
	else logins sasl; logins sasl_plaintext; fi
	run=$((run + 1))
done
for v in sasl_plaintext sasl; do
	eval "lus_$v=\$(median <\"\$WORK/lus_$v\")"
	eval "lms_$v=\$(median <\"\$WORK/lms_$v\")"
done
say tls_login_scram_broker_cpu "$lus_sasl_plaintext" us
say tls_login_scram_ssl_broker_cpu "$lus_sasl" us
say tls_login_scram_per_core_s "$(awk -v u="$lus_sasl_plaintext" \
	'BEGIN { printf "%.0f", 1e6 / u }')" logins/s
say tls_login_scram_ssl_per_core_s "$(awk -v u="$lus_sasl" \
	'BEGIN { printf "%.0f", 1e6 / u }')" logins/s
say tls_login_scram_wall "$lms_sasl_plaintext" ms
say tls_login_scram_ssl_wall "$lms_sasl" ms
