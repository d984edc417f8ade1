#!/usr/bin/env bats
# klog's own tools log in on a SASL native listener (klog-security(7),
# AUTHENTICATE in klog-protocol(7)): klog-produce, klog-consume and
# klog-group with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 over SASL_SSL://
# and SASL_PLAINTEXT://, the password from -X, from -F (the file kcat -F
# reads too) or from $KLOG_SASL_PASSWORD; a wrong password and an unknown
# user refused alike, in one line and exit 77.

bats_require_minimum_version 1.5.0
load helpers
load pki

setup() {
	common_setup
	unset KLOG_BROKERS KLOG_ZOOKEEPER KLOG_DATA_DIR KLOG_SASL_PASSWORD
	make_pki
	printf 'alice-secret' | klog-group --users "$TMP/users" users add \
		--mechanism all alice >/dev/null
	CA=$TMP/pki/ca.pem
}

teardown() {
	common_teardown
}

# sasl_broker PROTOCOL [options]: a standalone broker whose native
# listener is PROTOCOL:// (KLOG_BROKERS), users from $TMP/users; its Kafka
# listener SASL_SSL:// (KAFKA).
sasl_broker() {
	local proto=$1 port
	shift
	port=$(free_port)
	KAFKA="127.0.0.1:$(free_port)"
	export KLOG_BROKERS="127.0.0.1:$port"
	klog-serve -d "$TMP/data" -l "$proto://$KLOG_BROKERS" \
		--kafka-listen "SASL_SSL://$KAFKA" --users "$TMP/users" \
		--ssl-cert "$TMP/pki/server.pem" --ssl-key "$TMP/pki/server.key" \
		"$@" 2>>"$TMP/broker.log" &
	PIDS+=("$!")
	wait_port "$port" 5 && wait_port "${KAFKA#*:}" 5 || {
		cat "$TMP/broker.log" >&2
		return 1
	}
}

# The -X words of SASL_SSL as alice with mechanism $1, trusting the CA.
sasl() {
	SASL=(-X security.protocol=sasl_ssl -X "ssl.ca.location=$CA"
	    -X "sasl.mechanism=$1" -X sasl.username="${2:-alice}")
}

@test "sasl clients: produce, consume and group log in with each mechanism; -X, -F and the environment" {
	sasl_broker SASL_SSL --sasl-mechanisms PLAIN,SCRAM-SHA-256,SCRAM-SHA-512
	# klog-group with PLAIN, the password from the environment.
	sasl PLAIN
	KLOG_SASL_PASSWORD=alice-secret run -0 klog-group -b "$KLOG_BROKERS" \
		"${SASL[@]}" create-topic -t t --partitions 2
	# klog-produce with SCRAM-SHA-512, the password on the command line.
	sasl SCRAM-SHA-512
	seq 5000 >"$TMP/in"
	run -0 klog-produce -t t -a all "${SASL[@]}" \
		-X sasl.password=alice-secret <"$TMP/in"
	# klog-consume with SCRAM-SHA-256 from a file, which kcat reads too.
	printf '%s\n' 'security.protocol=SASL_SSL' "ssl.ca.location=$CA" \
		'sasl.mechanisms=SCRAM-SHA-256' 'sasl.username=alice' \
		'sasl.password=alice-secret' >"$TMP/client.properties"
	chmod 600 "$TMP/client.properties"
	klog-consume -t t -o beginning -e -F "$TMP/client.properties" |
		sort -n >"$TMP/out"
	cmp "$TMP/in" "$TMP/out"
	run -0 --separate-stderr timeout 60 kcat -b "$KAFKA" \
		-F "$TMP/client.properties" -q -C -t t -o beginning -e
	[ "${#lines[@]}" -eq 5000 ]
	# The password is in no log line.
	! grep -q alice-secret "$TMP/broker.log"
}

@test "sasl clients: a wrong password and an unknown user are one line alike and exit 77, in every tool" {
	sasl_broker SASL_SSL --topic t:1
	local m tool cmd wrong unknown
	for m in SCRAM-SHA-256 SCRAM-SHA-512; do
		for tool in consume produce group; do
			case $tool in
			consume) cmd=(klog-consume -t t -e) ;;
			produce) cmd=(klog-produce -t t) ;;
			group) cmd=(klog-group -b "$KLOG_BROKERS" create-topic -t u
			    --partitions 1) ;;
			esac
			sasl "$m"
			run -77 --separate-stderr "${cmd[@]}" "${SASL[@]}" \
				-X sasl.password=wrong-secret </dev/null
			[ "${#stderr_lines[@]}" -eq 1 ]
			[[ $stderr != *wrong-secret* ]]
			wrong=$stderr
			sasl "$m" mallory
			run -77 --separate-stderr "${cmd[@]}" "${SASL[@]}" \
				-X sasl.password=alice-secret </dev/null
			unknown=$stderr
			[ "$wrong" = "klog-$tool: $KLOG_BROKERS: authentication failed" ]
			[ "$unknown" = "$wrong" ]
		done
	done
	# The topic was never made.
	sasl SCRAM-SHA-256
	run -0 klog-consume -L "${SASL[@]}" -X sasl.password=alice-secret
	[ "$(printf '%s\n' "$output" | cut -f1 | sort -u)" = t ]
}

@test "sasl clients: no login on a SASL listener, a mechanism not offered, SASL where none is asked: exit 77" {
	sasl_broker SASL_SSL --topic t:1
	# TLS alone: the broker wants a login first.
	run -77 --separate-stderr klog-consume -t t -e \
		-X security.protocol=ssl -X "ssl.ca.location=$CA"
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == *AUTHENTICATION_REQUIRED* ]]
	# PLAIN is not among the broker's (the SCRAMs by default).
	sasl PLAIN
	run -77 --separate-stderr klog-consume -t t -e "${SASL[@]}" \
		-X sasl.password=alice-secret
	[ "$stderr" = "klog-consume: $KLOG_BROKERS: authentication failed: the broker does not offer PLAIN" ]
	# A plaintext listener: no login to give.
	port=$(free_port)
	klog-serve -d "$TMP/plain" -l "127.0.0.1:$port" --topic t:1 \
		2>>"$TMP/plain.log" &
	PIDS+=("$!")
	wait_port "$port" 5
	run -77 --separate-stderr klog-consume -b "127.0.0.1:$port" -t t -e \
		-X security.protocol=sasl_plaintext \
		-X sasl.mechanism=SCRAM-SHA-256 -X sasl.username=alice \
		-X sasl.password=alice-secret
	[[ $stderr == *"authentication failed: ILLEGAL_AUTH_STATE"* ]]
}

@test "sasl clients: SCRAM over SASL_PLAINTEXT://" {
	sasl_broker SASL_PLAINTEXT --topic t:1
	local x=(-X security.protocol=sasl_plaintext
	    -X sasl.mechanism=SCRAM-SHA-512 -X sasl.username=alice)
	export KLOG_SASL_PASSWORD=alice-secret
	run -0 klog-produce -t t "${x[@]}" <<<"in the clear, but logged in"
	run -0 klog-consume -t t -o beginning -e "${x[@]}"
	[ "$output" = "in the clear, but logged in" ]
}
