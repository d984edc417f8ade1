# Sourced by the scenario scripts (bench/NAME.sh), never run itself: a work
# directory on the real disk, brokers on port 0 stopped by their pid,
# medians, /proc readings and the summary-line format.
#
# Knobs (environment):
#   BENCH_SCALE   multiplies every message count and size (default 1;
#                 0.01 for a smoke run of a few seconds)
#   BENCH_RUNS    runs behind each median (default 5)
#   BENCH_TMPDIR  where the data goes (default build/bench-tmp, which is
#                 on the same disk as the tree; not a tmpfs)
#
# Output: lines starting with "#" are commentary (individual runs, skipped
# parts, targets); every other line is a summary "name value unit".
# Variables of these functions start with "_", so as not to clobber the
# scripts' own.

set -eu
cd "$(dirname "$0")/.."
ROOT=$PWD
B=$ROOT/build/bench
SERVE=$ROOT/bin/klog-serve
SCALE=${BENCH_SCALE:-1}
RUNS=${BENCH_RUNS:-5}
TMPROOT=${BENCH_TMPDIR:-$ROOT/build/bench-tmp}
ENTRY=209	# bytes of one 200-byte message in a segment
ZKSERVER=/usr/share/zookeeper/bin/zkServer.sh
PIDS=
WORK=

# scaled N [MIN]: N times BENCH_SCALE, rounded, at least MIN (default 1).
scaled() {
	awk -v n="$1" -v s="$SCALE" -v m="${2:-1}" \
		'BEGIN { v = int(n * s + 0.5); if (v < m) v = m; printf "%.0f\n", v }'
}

# bytes SIZE: "100M", "1G", "512K" or plain bytes, in bytes.
bytes() {
	awk -v s="$1" 'BEGIN {
		n = s + 0; u = toupper(substr(s, length(s)))
		if (u == "K") n *= 1024; else if (u == "M") n *= 1048576
		else if (u == "G") n *= 1073741824
		else if (u == "T") n *= 1099511627776
		printf "%.0f\n", n }'
}

# say LINE: a summary line "name value unit".
say() { printf '%s %s %s\n' "$1" "$2" "$3"; }

# note TEXT: commentary.
note() { printf '# %s\n' "$*"; }

# field KEY LINE: the word after KEY in LINE (the bench programs' output).
field() {
	printf '%s\n' "$2" | awk -v k="$1" \
		'{ for (i = 1; i < NF; i++) if ($i == k) { print $(i + 1); exit } }'
}

# median: of the numbers on stdin, one a line.
median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "nan"; exit }
		if (NR % 2) print v[(NR + 1) / 2]
		else printf "%.15g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# ratio A B [DIGITS]: A / B.
ratio() {
	awk -v a="$1" -v b="$2" -v d="${3:-3}" \
		'BEGIN { if (b + 0 == 0) print "nan"; else printf "%.*f\n", d, a / b }'
}

# target NAME VALUE OP GOAL UNIT: commentary on whether a goal was met.
target() {
	awk -v n="$1" -v v="$2" -v op="$3" -v g="$4" -v u="$5" 'BEGIN {
		ok = op == ">=" ? v + 0 >= g + 0 : v + 0 <= g + 0
		printf "# %s: target %s %s %s: %s\n", n, op, g, u,
			ok ? "met" : "missed" }'
}

# now_ms: wall-clock milliseconds, for the programs' -S start time.
now_ms() { date +%s%3N; }

# now_s: wall-clock seconds with nanoseconds, for timing commands.
now_s() { date +%s.%N; }

# elapsed T0 T1: seconds between two now_s readings.
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f\n", b - a }'; }

bench_cleanup() {
	# CONT first: a stopped process would take TERM only when killed.
	for _p in $PIDS; do
		kill -CONT "$_p" 2>/dev/null || :
		kill -TERM "$_p" 2>/dev/null || :
	done
	for _p in $PIDS; do
		_n=100
		while kill -0 "$_p" 2>/dev/null && [ "$_n" -gt 0 ]; do
			sleep 0.05
			_n=$((_n - 1))
		done
		kill -KILL "$_p" 2>/dev/null || :
	done
	PIDS=
	[ -z "$WORK" ] || rm -rf "$WORK"
}

# bench_setup NAME: a fresh $WORK under $TMPROOT, removed at exit with
# every process recorded in $PIDS.
bench_setup() {
	for _p in bench_produce bench_consume bench_latency bench_sys \
		bench_accesslog; do
		[ -x "$B/$_p" ] || {
			echo "$1: $B/$_p missing: run 'make bench'" >&2
			exit 1
		}
	done
	mkdir -p "$TMPROOT"
	WORK=$(mktemp -d "$TMPROOT/$1.XXXXXX")
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM
}

# track PID / untrack PID: processes to stop at exit.
track() { PIDS="$PIDS $1"; }
untrack() {
	_rest=
	for _p in $PIDS; do [ "$_p" = "$1" ] || _rest="$_rest $_p"; done
	PIDS=$_rest
}

# broker_start DIR [klog-serve options]: a broker on 127.0.0.1, port 0,
# data in DIR, log in DIR.log.  Sets BROKER (host:port) and BROKER_PID.
broker_start() {
	_dir=$1
	shift
	: >"$_dir.log"
	"$SERVE" -d "$_dir" -l 127.0.0.1:0 "$@" 2>>"$_dir.log" &
	BROKER_PID=$!
	track "$BROKER_PID"
	_n=1000
	while :; do
		_port=$(sed -n \
			's/.*listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' \
			"$_dir.log" | tail -n 1)
		[ -z "$_port" ] || break
		_n=$((_n - 1))
		if [ "$_n" -eq 0 ] || ! kill -0 "$BROKER_PID" 2>/dev/null; then
			cat "$_dir.log" >&2
			echo "klog-serve did not start" >&2
			exit 1
		fi
		sleep 0.01
	done
	BROKER=127.0.0.1:$_port
}

# broker_stop [PID]: a clean stop (SIGTERM), waited for.
broker_stop() {
	_pid=${1:-$BROKER_PID}
	kill -TERM "$_pid" 2>/dev/null || :
	wait "$_pid" 2>/dev/null || :
	untrack "$_pid"
}

# start_at MS: the programs' -S value, MS from now.
start_at() { echo $(($(now_ms) + $1)); }

# produce_followed N FILE [DELAY_MS [FROM]]: N messages from bench_produce
# (50 a request, acks 1) with bench_consume following from offset FROM
# (default end), both started DELAY_MS (default 300) from now; the
# producer's line on stdout, the consumer's in FILE.  Run it in $(...): the
# consumer is that shell's.  Give FROM, the log's end, when the machine may
# be slow: a consumer that looks up "end" after the producer's start misses
# what came before and waits for it 30 s.
produce_followed() {
	_at=$(start_at "${3:-300}")
	"$B/bench_consume" -b "$BROKER" -o "${4:-end}" -n "$1" -S "$_at" >"$2" &
	_fpid=$!
	"$B/bench_produce" -b "$BROKER" -n "$1" -m 50 -a 1 -S "$_at"
	wait "$_fpid"
}

# proc_kb PID FIELD: VmRSS, VmHWM ... from /proc/PID/status, in kB.
proc_kb() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }

# thread_read_bytes PID NAME: what PID's thread NAME asked the disk for
# (read_bytes of /proc/PID/task/*/io), 0 where that is not accounted.
thread_read_bytes() {
	for _t in /proc/"$1"/task/*; do
		[ "$(cat "$_t/comm" 2>/dev/null)" = "$2" ] || continue
		awk '$1 == "read_bytes:" { print $2; exit }' "$_t/io" \
			2>/dev/null && return 0
	done
	echo 0
}

# steal_ms: CPU time the hypervisor has taken from this machine's CPUs since
# boot, all CPUs together (the steal column of /proc/stat), in ms.  On a
# virtual machine, runs with a lot of it measure the host's other tenants:
# a vCPU not run for a few ms adds as much to every latency it holds up.
steal_ms() {
	awk -v hz="$(getconf CLK_TCK)" \
		'$1 == "cpu" { printf "%.0f\n", $9 * 1000 / hz; exit }' /proc/stat
}

# cpu_ticks PID: utime + stime of PID, in clock ticks.
cpu_ticks() {
	sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

# fd_count PID: open descriptors of PID.
fd_count() { ls "/proc/$1/fd" | wc -l; }

# free_bytes DIR: bytes available on DIR's file system.
free_bytes() { df -Pk "$1" | awk 'NR == 2 { printf "%.0f\n", $4 * 1024 }'; }

# evict DIR: drop DIR's files from the page cache (written back first), so
# that reading them goes to the disk; needs no root.
evict() {
	sync
	python3 - "$1" <<-'PY' || note "evict: python3 failed; cache kept"
	import os, sys
	for top, dirs, files in os.walk(sys.argv[1]):
	    for f in files:
	        fd = os.open(os.path.join(top, f), os.O_RDONLY)
	        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
	        os.close(fd)
	PY
}

# loopback_mb_s: the machine's TCP loopback limit, measured now.
loopback_mb_s() {
	"$B/bench_sys" loopback "$(scaled 1024 16)" |
		awk '$1 == "loopback_mb_s" { print $2 }'
}

# pagecache_mb_s: the machine's page-cache write limit, measured now.
pagecache_mb_s() {
	TMPDIR=$TMPROOT "$B/bench_sys" pagecache "$(scaled 1024 16)" |
		awk '$1 == "pagecache_mb_s" { print $2 }'
}

# free_port: a TCP port on 127.0.0.1 that was free a moment ago (a
# server given it may still lose it to another: try again then).
free_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# records N: N lines of 200 bytes (a 10-digit number, then filler).
records() {
	awk -v n="$1" 'BEGIN {
		f = sprintf("%190s", ""); gsub(/ /, "x", f)
		for (i = 0; i < n; i++) printf "%010d%s\n", i, f }'
}

# fill BROKER TOPIC MESSAGES [PARTITION]: put MESSAGES 200-byte messages
# into a partition, fast (not timed).
fill() {
	"$B/bench_produce" -b "$1" -t "$2" -n "$3" -m 500 -w 64 \
		-p "${4:-0}" >/dev/null
}

# zk_up PORT: whether the server there answers srvr with a Mode.
zk_up() {
	python3 - "$1" <<-'PY' 2>/dev/null
	import socket, sys
	s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)
	s.sendall(b"srvr\n")
	data = b""
	while True:
	    chunk = s.recv(4096)
	    if not chunk:
	        break
	    data += chunk
	sys.exit(0 if b"Mode:" in data else 1)
	PY
}

# zk_start: a standalone ZooKeeper on a free port in $WORK/zk, started as
# tests/bats/helpers.bash's start_zk does; sets ZK (and ZK_PID, tracked).
zk_start() {
	for _try in 1 2 3; do
		ZK_PORT=$(python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')
		rm -rf "$WORK/zk"
		mkdir -p "$WORK/zk/data"
		cat >"$WORK/zk/zoo.cfg" <<-CFG
		tickTime=500
		dataDir=$WORK/zk/data
		clientPort=$ZK_PORT
		clientPortAddress=127.0.0.1
		admin.enableServer=false
		minSessionTimeout=1000
		maxSessionTimeout=10000
		maxClientCnxns=0
		forceSync=no
		4lw.commands.whitelist=srvr
		CFG
		JMXDISABLE=true "$ZKSERVER" start-foreground "$WORK/zk/zoo.cfg" \
			>"$WORK/zk/log" 2>&1 &
		ZK_PID=$!
		track "$ZK_PID"
		_n=300
		while [ "$_n" -gt 0 ] && kill -0 "$ZK_PID" 2>/dev/null; do
			if zk_up "$ZK_PORT"; then
				ZK=127.0.0.1:$ZK_PORT
				return 0
			fi
			sleep 0.1
			_n=$((_n - 1))
		done
		kill -KILL "$ZK_PID" 2>/dev/null || :
		wait "$ZK_PID" 2>/dev/null || :
		untrack "$ZK_PID"
	done
	cat "$WORK/zk/log" >&2
	echo "ZooKeeper did not start" >&2
	exit 1
}
