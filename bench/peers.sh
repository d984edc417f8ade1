#!/bin/sh
# peers: klog's tools exactly as users run them, beside Redis 7 Streams on
# the same machine (issue 17): PEERS_RECORDS records (default 1000000,
# times BENCH_SCALE) of 200 bytes, a line each; one client; loopback.
# Each of BENCH_RUNS runs measures, in this order:
#   pagecache  write(2) of 1 MiB blocks into a new file as large as the log
#              (bench_sys pagecache, the median of its five files)
#   batch1     klog-produce --batch 1 -a 1 -t t < input    a fresh broker
#   batch50    klog-produce --batch 50 -a 1 -t t < input   a fresh broker
#   consume    klog-consume -t t -o beginning -e > /dev/null of batch50's
#              log once flushed (its last record visible), CRCs checked
#              (its default)
#   xadd1      bench_redis xadd1: one XADD a send(2), 1024 in flight
#   xadd50     bench_redis xadd50: 50 XADDs a send(2)
#   xread      bench_redis xread of xadd50's stream, XREAD COUNT 1000
# The tools are timed from start to exit (their -v counts checked),
# bench_redis from its first send to its last reply; each xadd goes into a
# fresh redis-server.
#
# Redis runs with NO PERSISTENCE (--save '' --appendonly no), on a free
# 127.0.0.1 port: its streams stay in memory, while klog writes every
# record to its log files (the page cache; -a 1 does not sync).  Without
# redis-server (or $REDIS_SERVER), Debian's package is installed when
# root, its service kept from starting (policy-rc.d during the install,
# disabled under systemd); otherwise the apt-get command is printed and
# the Redis part skipped.
#
# Figures, medians of the runs: msg/s; MB/s (10^6 bytes) written to the
# log for the producers (209 bytes a record, with its framing), of payload
# for the consumer and Redis; batch50's bytes as a fraction of the page
# cache's, and klog's msg/s over Redis's, each taken within a run before
# the median.  Targets: batch50 >= 0.9 of the page cache; batch1 >=
# 1,000,000 msg/s and >= 2 x xadd1; consume >= 10,000,000 msg/s and >= 6 x
# xread.  Knobs: PEERS_RECORDS, REDIS_SERVER.
. "$(dirname "$0")/lib.sh"
[ -x "$B/bench_redis" ] || {
	echo "peers: $B/bench_redis missing: run 'make bench'" >&2
	exit 1
}
bench_setup peers
POLICY=/usr/sbin/policy-rc.d
OWN_POLICY=
trap '[ -z "$OWN_POLICY" ] || rm -f "$POLICY"; bench_cleanup' EXIT

# redis_install: Debian's redis-server, as root, not started by apt (we
# start our own); else say how, and fail.
redis_install() {
	_cmd="apt-get install -y --no-install-recommends redis-server"
	if [ "$(id -u)" -ne 0 ]; then
		note "peers: no redis-server; for the Redis figures run as" \
			"root: apt-get update && $_cmd"
		return 1
	fi
	note "peers: installing redis-server"
	if [ ! -e "$POLICY" ]; then
		printf '#!/bin/sh\nexit 101\n' >"$POLICY"
		chmod 755 "$POLICY"
		OWN_POLICY=1
	fi
	_ok=1
	DEBIAN_FRONTEND=noninteractive apt-get update -qq \
		>"$WORK/apt.log" 2>&1 &&
		DEBIAN_FRONTEND=noninteractive $_cmd >>"$WORK/apt.log" 2>&1 ||
		_ok=
	[ -z "$OWN_POLICY" ] || rm -f "$POLICY"
	OWN_POLICY=
	if [ -d /run/systemd/system ]; then
		systemctl disable --now redis-server.service \
			>>"$WORK/apt.log" 2>&1 || :
	fi
	[ -n "$_ok" ] || { cat "$WORK/apt.log" >&2; return 1; }
}

# redis_start: a fresh redis-server on a free 127.0.0.1 port, saving
# nothing; sets REDIS_PORT and REDIS_PID (tracked).
redis_start() {
	rm -rf "$WORK/redis"
	mkdir -p "$WORK/redis"
	for _try in 1 2 3; do
		REDIS_PORT=$(free_port)
		: >"$WORK/redis.log"
		"$REDIS" --bind 127.0.0.1 --port "$REDIS_PORT" --save '' \
			--appendonly no --dir "$WORK/redis" \
			--logfile "$WORK/redis.log" >/dev/null 2>&1 &
		REDIS_PID=$!
		track "$REDIS_PID"
		_n=1000
		while [ "$_n" -gt 0 ] && kill -0 "$REDIS_PID" 2>/dev/null; do
			grep -q 'Ready to accept connections' "$WORK/redis.log" &&
				return 0
			sleep 0.01
			_n=$((_n - 1))
		done
		kill -KILL "$REDIS_PID" 2>/dev/null || :
		wait "$REDIS_PID" 2>/dev/null || :
		untrack "$REDIS_PID"
	done
	cat "$WORK/redis.log" >&2
	echo "peers: redis-server did not start" >&2
	exit 1
}

# redis_case MODE NAME: bench_redis MODE on the running server; its msg/s
# and MB/s onto $WORK/NAME and $WORK/NAME.mb.
redis_case() {
	_out=$("$B/bench_redis" "$1" -n "$records" -p "$REDIS_PORT")
	note "run $i: redis $1: $_out"
	field mb_s "$_out" >>"$WORK/$2.mb"
	field msgs_s "$_out" >>"$WORK/$2"
}

# produce BATCH NAME: klog-produce --batch BATCH into the running broker,
# checked and timed; msg/s and log MB/s onto $WORK/NAME and NAME.mb.
produce() {
	_t0=$(now_s)
	"$ROOT/bin/klog-produce" -v --batch "$1" -a 1 -b "$BROKER" -t t \
		<"$WORK/input" 2>"$WORK/produce.err"
	_t1=$(now_s)
	grep -q ", $records acknowledged," "$WORK/produce.err" || {
		echo "peers: klog-produce --batch $1 did not have all" \
			"$records acknowledged:" >&2
		cat "$WORK/produce.err" >&2
		exit 1
	}
	_log=$(find "$WORK/data" -name '*.klog' -exec stat -c %s {} + |
		awk '{ n += $1 } END { printf "%.0f\n", n }')
	_s=$(elapsed "$_t0" "$_t1")
	note "run $i: klog-produce --batch $1: $_s s, $_log bytes of log"
	awk -v b="$_log" -v s="$_s" 'BEGIN { printf "%.1f\n", b / s / 1e6 }' \
		>>"$WORK/$2.mb"
	ratio "$records" "$_s" 0 >>"$WORK/$2"
}

# consume: klog-consume of topic t from its beginning, checked and timed;
# msg/s and payload MB/s onto $WORK/c and c.mb.
consume() {
	# A consumer sees only what the broker has flushed, and straight
	# after a producer at several hundred MB/s the disk's fsync sets that
	# pace (0.31-0.34 s for the 1 M records here, against 0.12-0.19 once
	# flushed): the last record visible first, so that what is timed is
	# the consumer.
	"$ROOT/bin/klog-consume" -q -b "$BROKER" -t t -o -1 -e >/dev/null
	_t0=$(now_s)
	"$ROOT/bin/klog-consume" -v -b "$BROKER" -t t -o beginning -e \
		>/dev/null 2>"$WORK/consume.err"
	_t1=$(now_s)
	_got=$(sed -n 's/^klog-consume: \([0-9]*\) messages.*/\1/p' \
		"$WORK/consume.err")
	[ "$_got" = "$records" ] || {
		echo "peers: klog-consume read ${_got:-no} messages of" \
			"$records" >&2
		cat "$WORK/consume.err" >&2
		exit 1
	}
	_s=$(elapsed "$_t0" "$_t1")
	note "run $i: klog-consume: $_s s"
	awk -v n="$records" -v s="$_s" \
		'BEGIN { printf "%.1f\n", n * 200 / s / 1e6 }' >>"$WORK/c.mb"
	ratio "$records" "$_s" 0 >>"$WORK/c"
}

# last NAME: this run's figure in $WORK/NAME.
last() { tail -n 1 "$WORK/$1"; }

REDIS=${REDIS_SERVER:-$(command -v redis-server || :)}
if [ -n "${REDIS_SERVER:-}" ] && [ ! -x "$REDIS_SERVER" ]; then
	echo "peers: REDIS_SERVER=$REDIS_SERVER: not an executable" >&2
	exit 1
fi
if [ -z "$REDIS" ] && redis_install; then
	REDIS=$(command -v redis-server || :)
fi
[ -n "$REDIS" ] || note "peers: Redis skipped"
[ -z "$REDIS" ] || note "$("$REDIS" --version)"

records=$(scaled "${PEERS_RECORDS:-1000000}" 1000)
mb=$(awk -v b="$((records * ENTRY))" \
	'BEGIN { printf "%d\n", (b + 1048575) / 1048576 }')
records "$records" >"$WORK/input"
note "$records records of 200 bytes, a log of $((records * ENTRY)) bytes," \
	"$RUNS runs"

i=1
while [ "$i" -le "$RUNS" ]; do
	pc=$(TMPDIR=$TMPROOT "$B/bench_sys" pagecache "$mb" |
		awk '$1 == "pagecache_mb_s" { print $2 }')
	note "run $i: page cache $pc MB/s ($mb MiB files)"
	echo "$pc" >>"$WORK/pc"
	broker_start "$WORK/data"
	produce 1 b1
	broker_stop
	rm -rf "$WORK/data"
	broker_start "$WORK/data"
	produce 50 b50
	ratio "$(last b50.mb)" "$pc" >>"$WORK/b50pc"
	consume
	broker_stop
	rm -rf "$WORK/data"
	if [ -n "$REDIS" ]; then
		redis_start
		redis_case xadd1 x1
		broker_stop "$REDIS_PID"
		redis_start
		redis_case xadd50 x50
		redis_case xread xr
		broker_stop "$REDIS_PID"
		ratio "$(last b1)" "$(last x1)" >>"$WORK/b1x1"
		ratio "$(last b50)" "$(last x50)" >>"$WORK/b50x50"
		ratio "$(last c)" "$(last xr)" >>"$WORK/cxr"
	fi
	i=$((i + 1))
done

say peers_pagecache_mb_s "$(median <"$WORK/pc")" MB/s
for v in b1:produce_batch1 b50:produce_batch50 c:consume; do
	say "peers_${v#*:}_msgs_s" "$(median <"$WORK/${v%%:*}")" msg/s
	say "peers_${v#*:}_mb_s" "$(median <"$WORK/${v%%:*}.mb")" MB/s
done
frac=$(median <"$WORK/b50pc")
say peers_produce_batch50_of_pagecache "$frac" fraction
if [ -n "$REDIS" ]; then
	for v in x1:xadd1 x50:xadd50 xr:xread; do
		say "redis_${v#*:}_msgs_s" "$(median <"$WORK/${v%%:*}")" msg/s
		say "redis_${v#*:}_mb_s" "$(median <"$WORK/${v%%:*}.mb")" MB/s
	done
	r1=$(median <"$WORK/b1x1")
	rc=$(median <"$WORK/cxr")
	say peers_batch1_of_redis_xadd1 "$r1" x
	say peers_batch50_of_redis_xadd50 "$(median <"$WORK/b50x50")" x
	say peers_consume_of_redis_xread "$rc" x
fi
target peers_produce_batch50_of_pagecache "$frac" '>=' 0.9 fraction
target peers_produce_batch1_msgs_s "$(median <"$WORK/b1")" '>=' 1000000 msg/s
target peers_consume_msgs_s "$(median <"$WORK/c")" '>=' 10000000 msg/s
if [ -n "$REDIS" ]; then
	target peers_batch1_of_redis_xadd1 "$r1" '>=' 2 x
	target peers_consume_of_redis_xread "$rc" '>=' 6 x
else
	note "peers: the targets against Redis not checked (no redis-server)"
fi
