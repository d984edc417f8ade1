#!/usr/bin/env bats
# A replicated cluster with every guard on at once (klog-security(7)):
# native listeners SASL_SSL:// requiring client certificates, Kafka's ACLs
# from --acls, SCRAM users from --users.  Followers log in by their own
# certificates (CN=broker-<id>), which the ACLs grant CLUSTER_ACTION and
# the replica principal binds to their ids; klog's tools log in as alice
# by SCRAM over TLS, with a certificate as the listener requires.  acks=all
# records survive the leader's kill -9; a user without ACLs and a wrong
# password are refused with exit 77.

bats_require_minimum_version 1.5.0
load helpers
load pki

setup_file() {
	start_zk
}

teardown_file() {
	stop_zk
}

setup() {
	common_setup
	unset KLOG_BROKERS KLOG_ZOOKEEPER KLOG_DATA_DIR KLOG_SASL_PASSWORD
	make_pki
	P=$TMP/pki
	for id in 1 2 3; do cert "broker-$id" "broker-$id" ca; done
	for u in alice bob; do
		printf '%s-secret' "$u" | klog-group --users "$TMP/users" \
			users add "$u" >/dev/null
	done
	ACLS=$TMP/acls
	for id in 1 2 3; do
		klog-group --acls "$ACLS" acls add --allow-principal \
			"User:CN=broker-$id,O=klog tests" --operation ClusterAction \
			--cluster >/dev/null
	done
	for op in Write Read; do
		klog-group --acls "$ACLS" acls add --allow-principal User:alice \
			--operation "$op" --topic r >/dev/null
	done
	ZKC="$ZK/secure$BATS_TEST_NUMBER"
}

teardown() {
	common_teardown
}

# props USER PASSWORD: a properties file logging USER in by SCRAM over
# TLS, with the writer's certificate.
props() {
	printf '%s\n' security.protocol=SASL_SSL "ssl.ca.location=$P/ca.pem" \
		"ssl.certificate.location=$P/writer.pem" \
		"ssl.key.location=$P/writer.key" sasl.mechanism=SCRAM-SHA-512 \
		"sasl.username=$1" "sasl.password=$2" >"$TMP/$1-$2.properties"
	echo "$TMP/$1-$2.properties"
}

secure_broker() {
	local id=$1 n=200
	BROKER_PORTS[$id]=${BROKER_PORTS[$id]:-$(free_port)}
	klog-serve -Z "$ZKC" --broker-id "$id" \
		-l "SASL_SSL://127.0.0.1:${BROKER_PORTS[$id]}" \
		-d "$TMP/broker-$id" --ssl-cert "$P/broker-$id.pem" \
		--ssl-key "$P/broker-$id.key" --ssl-ca "$P/ca.pem" \
		--ssl-client-auth required --users "$TMP/users" --acls "$ACLS" \
		--zk-session-timeout 2000 --replica-lag-time 3s \
		2>>"$TMP/broker-$id.log" &
	BROKER_PIDS[$id]=$!
	PIDS+=("$!")
	until klog-group -Z "$ZKC" -H brokers 2>/dev/null |
	    grep -q "^$id	127.0.0.1	${BROKER_PORTS[$id]}\$"; do
		n=$((n - 1))
		[ "$n" -gt 0 ] && kill -0 "${BROKER_PIDS[$id]}" || {
			cat "$TMP/broker-$id.log" >&2
			return 1
		}
		sleep 0.1
	done
}

topic_field() {
	klog-group -Z "$ZKC" -H -J topics -t r 2>/dev/null | jq -c "$1"
}

wait_for() {
	local n=$(( $1 * 5 ))
	shift
	until "$@"; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.2
	done
}

isr_full() { [ "$(topic_field '.isr | length')" = 3 ]; }
led_by_other() {
	local l
	l=$(topic_field .leader)
	[ -n "$l" ] && [ "$l" != -1 ] && [ "$l" != "$1" ]
}

@test "secure cluster: SASL_SSL://, client certificates and ACLs on every broker; followers log in by certificate; acks=all records survive the leader's kill -9" {
	local alice bob leader
	secure_broker 1 && secure_broker 2 && secure_broker 3
	run -0 klog-group -Z "$ZKC" create-topic -t r --partitions 1 \
		--replication-factor 3 --min-insync-replicas 2
	alice=$(props alice alice-secret)
	bob=$(props bob bob-secret)
	seq 3000 >"$TMP/in"
	run -0 klog-produce -Z "$ZKC" -t r -a all -F "$alice" <"$TMP/in"
	# Both followers fetch, by their certificates, under the ACLs.
	sleep 4
	wait_for 30 isr_full
	# Logged in, but no ACL for bob; a wrong password for alice.
	run -77 klog-produce -Z "$ZKC" -t r -a all -F "$bob" <<<"bob"
	[[ $output == *"not authorized (TOPIC_AUTHORIZATION_FAILED)"* ]]
	run -77 klog-consume -Z "$ZKC" -t r -o beginning -e \
		-F "$(props alice wrong)"
	[[ $output == *"authentication failed"* ]]
	leader=$(topic_field .leader)
	kill -KILL "${BROKER_PIDS[$leader]}"
	wait "${BROKER_PIDS[$leader]}" 2>/dev/null || :
	wait_for 30 led_by_other "$leader"
	run -0 klog-consume -Z "$ZKC" -t r -o beginning -e -F "$alice"
	diff <(printf '%s\n' "${lines[@]}") "$TMP/in"
	run -0 klog-produce -Z "$ZKC" -t r -a all -F "$alice" <<<"after"
	# No broker was refused anything.
	! grep -h "CN=broker" "$TMP"/broker-*.log
}
