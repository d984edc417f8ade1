#!/bin/bash
# make soak SOAK=idempotence: confluent-kafka's idempotent producer
# (tests/bats/idemprod.py) writing numbered records to a standalone
# broker's Kafka listener for SOAK_SECONDS (default 300), through a relay
# that loses acknowledgements (tests/bats/ackdrop.py), while the broker is
# killed -9 and restarted and acknowledgements are dropped, each at random
# moments (SOAK_SEED), a fault every 2 to 6 s.  At the end: the producer
# had every record acknowledged and none failed, and the partition holds
# each record exactly once, in order.  The figures on stdout; exit 0 only
# if every check passed.  127.0.0.1, free ports, a temp dir, processes
# killed by pid.
set -u
cd "$(dirname "$0")/../.." || exit 1
BATS_TEST_DIRNAME=$PWD/tests/bats
. tests/bats/helpers.bash

SOAK_SECONDS=${SOAK_SECONDS:-300}
RANDOM=${SOAK_SEED:-$$}
PY=/usr/bin/python3

[ -x bin/klog-serve ] || { echo "make soak: build first" >&2; exit 1; }
common_setup
trap 'common_teardown' EXIT
trap 'exit 130' INT TERM
die() { echo "soak idempotence: FAIL: $*" >&2; tail -20 "$TMP/broker.log" >&2; exit 1; }

KPORT=$(free_port)
PPORT=$(free_port)
serve() {
	start_broker --kafka-listen "127.0.0.1:$KPORT" --topic idem:1 \
		--kafka-advertise "127.0.0.1:$PPORT" --segment-bytes 4M ||
		die "broker did not start"
	wait_port "$KPORT" 10 || die "Kafka listener did not start"
}

serve
"$PY" tests/bats/ackdrop.py "$PPORT" "$KPORT" "$TMP/drop" &
PIDS+=("$!")
wait_port "$PPORT" 10 || die "relay did not start"
"$PY" tests/bats/idemprod.py "127.0.0.1:$PPORT" idem 100000000 \
	"$TMP/progress" "$SOAK_SECONDS" >"$TMP/producer.out" \
	2>"$TMP/producer.err" &
PROD=$!
PIDS+=("$PROD")
kills=0 drops=0
end=$((SECONDS + SOAK_SECONDS))
while [ "$SECONDS" -lt "$end" ] && kill -0 "$PROD" 2>/dev/null; do
	sleep $((2 + RANDOM % 5))
	if [ $((RANDOM % 2)) -eq 0 ]; then
		kill -KILL "$BROKER_PID"
		wait_gone "$BROKER_PID" 10
		serve
		kills=$((kills + 1))
	else
		touch "$TMP/drop"
		drops=$((drops + 1))
	fi
done
wait "$PROD" || die "producer: $(tail -3 "$TMP/producer.err")"
sent=$(awk '$1 == "sent" { print $2 }' "$TMP/producer.out")
[ "$(tail -1 "$TMP/producer.out")" = "acked $sent failed 0 left 0 []" ] ||
	die "producer: $(cat "$TMP/producer.out")"
timeout 120 kcat -b "127.0.0.1:$KPORT" -q -C -t idem -p 0 -o beginning -e \
	-f '%s\n' >"$TMP/read" || die "kcat"
seq -f '%08g' 0 $((sent - 1)) >"$TMP/want"
dups=$(sort "$TMP/read" | uniq -d | wc -l)
echo "soak idempotence: $sent records acknowledged through $kills kill -9" \
	"and $drops lost acknowledgements; read $(wc -l <"$TMP/read")," \
	"duplicated $dups"
cmp -s "$TMP/read" "$TMP/want" || die "the log is not 0..$((sent - 1)) once each, in order"
echo "soak idempotence: ok"
