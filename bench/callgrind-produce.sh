#!/bin/sh
# callgrind-produce: instructions, not seconds, that klog-produce and the
# broker spend on the same nginx access-log lines (bench_accesslog, fixed
# seed) sent as plain lines, stamped (--timestamp), keyed by the client's
# address (-K ' ', the key stored) and by an idempotent producer: issue
# 30's "keyed records and idempotence each cost at most 10% on produce",
# taken as the produce path's count (klog-produce's and the broker's
# together, cg_path_*), each process's beside it.  Each run is a fresh broker under callgrind and one
# klog-produce under callgrind into it; a process's count is its whole run
# (the broker's start and stop included, the same in every run).  Counts
# hardly depend on the machine's load, but on how the producer's requests
# and the broker's answers interleave (plain runs spread 108-112 M), so each
# figure is the median of CG_RUNS runs.
#   make bench SCENARIO=callgrind-produce     (needs valgrind)
# Knobs: CG_LINES (default 200000), CG_RUNS (default 3).  Output: "name
# instructions Ir" lines; as commentary, each run's counts and what the
# record path took of them (inclusive: klog-produce's drain_input, the
# broker's klog_msgset_validate).  With kcat installed, also the broker's
# count for the same lines sent by kcat -z gzip through the Kafka listener
# (cg_serve_kafka_gzip: a compressed batch inflated once, or twice).
. "$(dirname "$0")/lib.sh"
command -v valgrind >/dev/null || {
	echo "callgrind-produce: valgrind missing" >&2
	exit 1
}
bench_setup callgrind

lines=${CG_LINES:-200000}
"$B/bench_accesslog" -n "$lines" >"$WORK/input"
note "$lines lines, $(wc -c <"$WORK/input") bytes, one partition, acks 1"
CG="valgrind --tool=callgrind --quiet"

# total FILE: the Ir a callgrind output file counts.
total() { awk '$1 == "summary:" || $1 == "totals:" { print $2; exit }' "$1"; }

# incl FILE FUNCTION: FUNCTION's inclusive Ir in FILE.
incl() {
	callgrind_annotate --inclusive=yes --auto=no --threshold=100 "$1" \
		2>/dev/null | awk -v f=":$2 " '
		index($0, f) { gsub(",", "", $1); print $1; n = 1; exit }
		END { if (!n) print 0 }'
}

# serve NAME [klog-serve options]: a broker under callgrind, data in
# $WORK/NAME; sets BROKER_PID and the log's port of the line matching $2 of
# the grep pattern ("listening on" or "Kafka listener on") in PORT.
serve() {
	_name=$1
	_what=$2
	shift 2
	rm -rf "$WORK/$_name"
	mkdir "$WORK/$_name"
	: >"$WORK/$_name.log"
	$CG --callgrind-out-file="$WORK/$_name.serve.cg" "$SERVE" \
		-d "$WORK/$_name" -l 127.0.0.1:0 "$@" 2>>"$WORK/$_name.log" &
	BROKER_PID=$!
	track "$BROKER_PID"
	_n=3000
	until PORT=$(sed -n "s/.*$_what 127\.0\.0\.1:\([0-9]*\).*/\1/p" \
		"$WORK/$_name.log" | tail -n 1) && [ -n "$PORT" ]; do
		_n=$((_n - 1))
		[ "$_n" -gt 0 ] && kill -0 "$BROKER_PID" 2>/dev/null || {
			cat "$WORK/$_name.log" >&2
			exit 1
		}
		sleep 0.01
	done
}

# run NAME [klog-produce options]: one broker and one producer, counted;
# appends to $WORK/NAME.p and NAME.s.
run() {
	_name=$1
	shift
	serve "$_name" "listening on"
	$CG --callgrind-out-file="$WORK/$_name.produce.cg" \
		"$ROOT/bin/klog-produce" -q -b "127.0.0.1:$PORT" -t t "$@" \
		<"$WORK/input"
	broker_stop
	_p=$(total "$WORK/$_name.produce.cg")
	_s=$(total "$WORK/$_name.serve.cg")
	note "$_name: klog-produce $_p Ir ($(incl "$WORK/$_name.produce.cg" \
		drain_input) in drain_input), broker $_s Ir ($(incl \
		"$WORK/$_name.serve.cg" klog_msgset_validate) in" \
		"klog_msgset_validate)"
	echo "$_p" >>"$WORK/$_name.p"
	echo "$_s" >>"$WORK/$_name.s"
}

# kafka_gzip: kcat's gzip batches (librdkafka's defaults, acks 1) through
# the Kafka listener, the broker counted (kcat is not); skipped without
# kcat.  Appends to $WORK/kafka_gzip.s.
kafka_gzip() {
	command -v kcat >/dev/null || return 0
	serve kafka_gzip "Kafka listener on" --kafka-listen 127.0.0.1:0
	kcat -P -b "127.0.0.1:$PORT" -t t -p 0 -z gzip -X acks=1 \
		<"$WORK/input"
	broker_stop
	_s=$(total "$WORK/kafka_gzip.serve.cg")
	note "kafka_gzip: broker $_s Ir ($(incl "$WORK/kafka_gzip.serve.cg" \
		klog_kbatch_ingest) in klog_kbatch_ingest, $(incl \
		"$WORK/kafka_gzip.serve.cg" klog_msgset_validate) in" \
		"klog_msgset_validate)"
	echo "$_s" >>"$WORK/kafka_gzip.s"
}

i=1
while [ "$i" -le "${CG_RUNS:-3}" ]; do
	run plain
	run timestamp --timestamp
	run keyed -K ' '
	run idempotent --idempotent
	kafka_gzip
	i=$((i + 1))
done
for k in plain timestamp keyed idempotent; do
	eval "P_$k=$(median <"$WORK/$k.p") S_$k=$(median <"$WORK/$k.s")"
	eval "say cg_produce_$k \$P_$k Ir"
	eval "say cg_serve_$k \$S_$k Ir"
done
[ ! -s "$WORK/kafka_gzip.s" ] ||
	say cg_serve_kafka_gzip "$(median <"$WORK/kafka_gzip.s")" Ir
# Each process's ratio, and the produce path's: both processes' counts
# together, what a record costs from stdin to the log (the target).
for k in timestamp keyed idempotent; do
	eval "p=\$P_$k s=\$S_$k"
	say "cg_produce_${k}_of_plain" "$(ratio "$p" "$P_plain")" fraction
	say "cg_serve_${k}_of_plain" "$(ratio "$s" "$S_plain")" fraction
	r=$(ratio "$((p + s))" "$((P_plain + S_plain))")
	say "cg_path_${k}_of_plain" "$r" fraction
	target "cg_path_${k}_of_plain" "$r" '<=' 1.1 fraction
done
