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
load replication

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
	rep_teardown
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

# secure_broker ID: broker ID (as start_zk_broker makes one) with -l
# SASL_SSL:// and every guard on, its own certificate its identity;
# returns once it is registered.
secure_broker() {
	local id=$1
	BROKER_PORTS[$id]=${BROKER_PORTS[$id]:-$(free_port)}
	klog-serve -Z "$ZKC" --broker-id "$id" -d "$TMP/broker-$id" \
		-l "SASL_SSL://127.0.0.1:${BROKER_PORTS[$id]}" \
		--ssl-cert "$P/broker-$id.pem" --ssl-key "$P/broker-$id.key" \
		--ssl-ca "$P/ca.pem" --ssl-client-auth required \
		--users "$TMP/users" --acls "$ACLS" \
		--zk-session-timeout "$REP_ZKS" --replica-lag-time "$REP_LAG" \
		2>>"$TMP/broker-$id.log" &
	BROKER_PIDS[$id]=$!
	PIDS+=("$!")
	rep_wait 20 rep_registered "$id"
}

@test "secure cluster: SASL_SSL://, client certificates and ACLs on every broker; followers log in by certificate; acks=all records survive the leader's kill -9" {
	local alice bob leader
	secure_broker 1 && secure_broker 2 && secure_broker 3
	# The ISR full: both followers fetch, by their certificates, under
	# the ACLs; and still full past --replica-lag-time.
	rep_create r 1
	alice=$(props alice alice-secret)
	bob=$(props bob bob-secret)
	seq 3000 >"$TMP/in"
	run -0 klog-produce -Z "$ZKC" -t r -a all -F "$alice" <"$TMP/in"
	sleep 4
	rep_wait_full r 1
	# klog-group asks the leader for the end over TLS, logged in, as
	# well: a group moved to it has no lag.
	run -0 klog-group -Z "$ZKC" -F "$alice" reset -g g -t r --to-latest \
		--execute
	run -0 klog-group -Z "$ZKC" -H -F "$alice" describe -g g -t r
	[[ $(cut -f5,6 <<<"$output") =~ ^[1-9][0-9]*$'\t'0$ ]]
	# Logged in, but no ACL for bob; a wrong password for alice.
	run -77 klog-produce -Z "$ZKC" -t r -a all -F "$bob" <<<"bob"
	[[ $output == *"not authorized (TOPIC_AUTHORIZATION_FAILED)"* ]]
	run -77 klog-consume -Z "$ZKC" -t r -o beginning -e \
		-F "$(props alice wrong)"
	[[ $output == *"authentication failed"* ]]
	leader=$(rep_leader r 0)
	rep_kill "$leader"
	rep_wait_new_leader r 0 "$leader"
	run -0 klog-consume -Z "$ZKC" -t r -o beginning -e -F "$alice"
	diff <(printf '%s\n' "${lines[@]}") "$TMP/in"
	run -0 klog-produce -Z "$ZKC" -t r -a all -F "$alice" <<<"after"
	# No broker was refused anything.
	! grep -h "CN=broker" "$TMP"/broker-*.log
}
