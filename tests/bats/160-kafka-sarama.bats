#!/usr/bin/env bats
# The Kafka listener with Go's sarama (Debian's 1.22.1: the Kafka library
# inside Filebeat and Telegraf), driven by tests/clients/sarama: at
# Version 2.1.0 (Filebeat's default) and at 0.10.2, the version before
# sarama's Metadata v5.  -T records the (API, version) of every request
# sarama writes, so each test shows the versions it covers.

bats_require_minimum_version 1.5.0
load helpers
load kafka

SARAMA="$KLOG_ROOT/build/clients/sarama"

setup() {
	[ -x "$SARAMA" ] || skip "no build/clients/sarama: make bats builds it \
when golang-go and golang-github-shopify-sarama-dev are installed"
	common_setup
	unset KLOG_BROKERS KLOG_ZOOKEEPER KLOG_DATA_DIR
	start_kafka_broker
}

teardown() {
	common_teardown
}

# sa COMMAND VERSION ARGS...: the client against the listener, its
# requests noted in $TMP/trace.
sa() {
	local cmd=$1 version=$2
	shift 2
	timeout 60 "$SARAMA" "$cmd" -b "$KAFKA" -v "$version" -T "$TMP/trace" \
	    -w 30 "$@"
}

# sent "API vN"...: sarama sent each of these requests.
sent() {
	local r
	for r in "$@"; do
		grep -qxF "$r" "$TMP/trace" || {
			echo "no $r among:" >&2
			sort "$TMP/trace" | uniq -c >&2
			return 1
		}
	done
}

# no_refusal: the broker refused no request's version.
no_refusal() {
	! grep UNSUPPORTED_VERSION "$TMP/broker.log"
}

# produce_consume VERSION: 1,000 lines in through a producer, out exactly
# from a partition consumer and from klog-consume.
produce_consume() {
	seq 1000 | sed 's/^/line /' >"$TMP/in"
	run -0 sa produce "$1" -t app <"$TMP/in"
	[ "$output" = "1000 acknowledged" ]
	sa consume "$1" -t app -n 1000 >"$TMP/out"
	cmp "$TMP/in" "$TMP/out"
	klog-consume -t app -o beginning -e >"$TMP/native"
	cmp "$TMP/in" "$TMP/native"
}

@test "sarama 2.1.0: 1,000 lines produced (acks all) are consumed back exactly" {
	produce_consume 2.1.0
	sent "Metadata v5" "Produce v3" "Fetch v4" "ListOffsets v1"
	no_refusal
}

@test "sarama 2.1.0: a ConsumerGroup reads and commits; its next run resumes after the commit" {
	seq 1000 | sed 's/^/old /' >"$TMP/in"
	run -0 sa produce 2.1.0 -t app <"$TMP/in"
	sa group 2.1.0 -t app -g filebeat -n 1000 >"$TMP/out"
	cmp "$TMP/in" "$TMP/out"
	# The second run reads what came after, not from the start again.
	seq 10 | sed 's/^/new /' >"$TMP/new"
	run -0 sa produce 2.1.0 -t app <"$TMP/new"
	sa group 2.1.0 -t app -g filebeat -n 10 >"$TMP/out2"
	cmp "$TMP/new" "$TMP/out2"
	sent "FindCoordinator v0" "JoinGroup v1" "SyncGroup v0" \
	    "OffsetFetch v1" "OffsetCommit v1" "LeaveGroup v0"
	no_refusal
}

@test "sarama 0.10.2: 1,000 lines produced are consumed back exactly (MessageSet v1)" {
	produce_consume 0.10.2.0
	sent "Metadata v1" "Produce v2" "Fetch v3"
	no_refusal
}

@test "sarama 2.1.0: a partition the topic lacks is sarama's error, exit 1" {
	run -0 sa produce 2.1.0 -t app <<<"x"
	run -1 sa consume 2.1.0 -t app -p 7 -n 1
	[[ $output == "sarama: kafka server: Request was for a topic or partition that does not exist on this broker." ]]
}
