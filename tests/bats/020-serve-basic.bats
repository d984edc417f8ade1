#!/usr/bin/env bats
# klog-serve: usage, starting and listening, the log lines, SIGTERM and the
# clean-shutdown marker, the config file and KLOG_DATA_DIR, topics.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	common_setup
}

teardown() {
	common_teardown
}

# serve ARGS...: start klog-serve on SERVE_PORT (a fresh one if unset) with
# its log in $TMP/serve.log; SERVE_PID is its pid.  Without -l or -c the
# listen address is added; without -d, -c or KLOG_DATA_DIR, -d $TMP/data.
serve() {
	SERVE_PORT=${SERVE_PORT:-$(free_port)}
	local args=("$@")
	[[ " $* " == *" -l "* || " $* " == *" -c "* ]] ||
		args+=(-l "127.0.0.1:$SERVE_PORT")
	[[ " $* " == *" -d "* || " $* " == *" -c "* ||
		-n "${KLOG_DATA_DIR:-}" ]] || args+=(-d "$TMP/data")
	klog-serve "${args[@]}" 2>>"$TMP/serve.log" &
	SERVE_PID=$!
	PIDS+=("$SERVE_PID")
	export KLOG_BROKERS="127.0.0.1:$SERVE_PORT"
	wait_port "$SERVE_PORT" 5 || { cat "$TMP/serve.log" >&2; return 1; }
	# The port accepts once bound; "listening on" is logged a moment
	# later, as the loop starts: tests that look for it wait for it.
	local i=0
	[[ " $* " == *" -q "* ]] && return 0
	until grep -q "listening on .*:$SERVE_PORT, " "$TMP/serve.log" ||
		[ "$i" -ge 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

# stop_serve: SIGTERM, and the exit status it ends with in $serve_rc.
stop_serve() {
	kill -TERM "$SERVE_PID"
	serve_rc=0
	wait "$SERVE_PID" || serve_rc=$?
}

@test "serve: -h prints usage on stdout, --version the version" {
	run -0 --separate-stderr klog-serve -h
	[[ "${lines[0]}" == "usage: klog-serve "* ]]
	[[ "$output" == *"--retention-hours"* ]]
	[ -z "$stderr" ]
	run -0 klog-serve --help
	[[ "$output" == *"--flush-ms"* ]]
	run -0 klog-serve --version
	[ "$output" = "klog-serve 0.1.0" ]
}

@test "serve: usage errors exit 64 with one line and a hint" {
	run -64 --separate-stderr klog-serve --bogus
	[ "$stderr" = "klog-serve: --bogus: unknown option
Try 'klog-serve -h'" ]
	run -64 --separate-stderr klog-serve -Y
	[ "${stderr_lines[0]}" = "klog-serve: -Y: unknown option" ]
	run -64 --separate-stderr klog-serve -d
	[ "${stderr_lines[0]}" = "klog-serve: -d: option needs an argument" ]
	run -64 --separate-stderr klog-serve --partitions 0
	[ "${stderr_lines[0]}" = "klog-serve: --partitions 0: too small" ]
	run -64 --separate-stderr klog-serve --cold-read-rate 512K
	[ "${stderr_lines[0]}" = "klog-serve: --cold-read-rate 512K: too small" ]
	run -64 --separate-stderr klog-serve --crc-threads 65
	[ "${stderr_lines[0]}" = "klog-serve: --crc-threads 65: too large" ]
	run -64 --separate-stderr klog-serve --crc-threads some
	[ "${stderr_lines[0]}" = "klog-serve: --crc-threads some: invalid" ]
	run -64 --separate-stderr klog-serve --flush-ms=soon
	[ "${stderr_lines[0]}" = "klog-serve: --flush-ms soon: invalid" ]
	run -64 --separate-stderr klog-serve --segment-bytes 1Q
	[ "${stderr_lines[0]}" = "klog-serve: --segment-bytes 1Q: invalid" ]
	run -64 --separate-stderr klog-serve --topic 'a/b:2'
	[[ "${stderr_lines[0]}" == "klog-serve: --topic a/b:2: "* ]]
	run -64 --separate-stderr klog-serve --topic ok:0
	[ "${stderr_lines[0]}" = "klog-serve: --topic ok:0: partitions: too small" ]
	run -64 --separate-stderr klog-serve -q -v
	[ "${stderr_lines[0]}" = "klog-serve: -q and -v cannot be used together" ]
	run -64 --separate-stderr klog-serve extra
	[ "${stderr_lines[0]}" = "klog-serve: extra: unexpected argument" ]
	run -64 --separate-stderr klog-serve -c "$TMP/missing.conf"
	[ "${stderr_lines[0]}" = "klog-serve: $TMP/missing.conf: No such file or directory" ]
	run -64 --separate-stderr klog-serve -l 'nope:port' -d "$TMP/d"
	[ "$stderr" = 'klog-serve: listen address "nope:port": invalid' ]
	[ ! -e "$TMP/d" ]
}

@test "serve: starts, says where, serves; SIGTERM: exit 0 and the clean marker" {
	serve
	grep -q "^klog-serve: info: listening on 127.0.0.1:$SERVE_PORT, data in $TMP/data\$" "$TMP/serve.log"
	seq 1 10 | klog-produce -t x
	run -0 klog-consume -t x -o beginning -e
	[ "$output" = "$(seq 1 10)" ]
	grep -q '^klog-serve: info: created topic "x" with 1 partition$' "$TMP/serve.log"
	[ ! -e "$TMP/data/.klog_cleanshutdown" ]
	stop_serve
	[ "$serve_rc" -eq 0 ]
	[ -e "$TMP/data/.klog_cleanshutdown" ]
	grep -q '^klog-serve: info: clean shutdown$' "$TMP/serve.log"
	# SIGINT too; a restart after a clean stop recovers nothing.
	serve
	! grep -q 'no clean-shutdown marker' "$TMP/serve.log"
	run -0 klog-consume -t x -o beginning -e -c 1
	[ "$output" = "1" ]
	kill -INT "$SERVE_PID"
	wait "$SERVE_PID"
	[ -e "$TMP/data/.klog_cleanshutdown" ]
}

@test "serve: acknowledged before a consumer starts is always visible" {
	serve
	for i in 1 2 3 4 5; do
		seq 1 10 | klog-produce -t "v$i"
		[ "$(klog-consume -t "v$i" -o beginning -e | wc -l)" -eq 10 ]
	done
	stop_serve
	# The same with fsyncs batched (at most every 10 minutes or 100000
	# messages): a consumer waits for one flush, not for the policy.
	serve --flush-ms 10m --flush-messages 100000
	for i in 1 2 3; do
		seq 1 10 | klog-produce -t b
		[ "$(klog-consume -t b -o beginning -e | wc -l)" -eq $((i * 10)) ]
	done
}

@test "serve: -q logs nothing on a clean run; -v adds debug lines" {
	serve -q
	echo x | klog-produce -t q
	stop_serve
	[ "$serve_rc" -eq 0 ]
	[ ! -s "$TMP/serve.log" ]
	SERVE_PORT=
	serve -v -d "$TMP/v"
	echo x | klog-produce -t q
	stop_serve
	grep -q '^klog-serve: debug: ' "$TMP/serve.log"
}

@test "serve: a config file; the command line wins; topics from both" {
	local p1 p2
	p1=$(free_port)
	p2=$(free_port)
	cat >"$TMP/klog.conf" <<-EOF
	# a comment, then blank lines

	data-dir = $TMP/confdata
	listen = 127.0.0.1:$p1
	topic = fromfile:3
	partitions = 2
	flush_ms = 0
	no-auto-create = yes
	cold-read-rate = off
	crc-threads = 2
	EOF
	SERVE_PORT=$p1
	serve -c "$TMP/klog.conf" --topic fromcli
	grep -q "listening on 127.0.0.1:$p1, data in $TMP/confdata" "$TMP/serve.log"
	[ "$(grep -lx klog-verify /proc/"$SERVE_PID"/task/*/comm | wc -l)" -eq 2 ]
	run -0 klog-consume -L -t fromfile
	[ "${#lines[@]}" -eq 3 ]
	# --topic without :N takes --partitions (here from the file).
	run -0 klog-consume -L -t fromcli
	[ "${#lines[@]}" -eq 2 ]
	# no-auto-create from the file.
	run -1 klog-produce -t other <<<"x"
	stop_serve
	# The command line's -l beats the file's listen.
	SERVE_PORT=$p2
	serve -c "$TMP/klog.conf" -l "127.0.0.1:$p2"
	grep -q "listening on 127.0.0.1:$p2, data in $TMP/confdata" "$TMP/serve.log"
	stop_serve
	# A bad line names the file and the line.
	printf 'listen = 127.0.0.1:1\nnope = 1\n' >"$TMP/bad.conf"
	run -64 --separate-stderr klog-serve -c "$TMP/bad.conf"
	[ "${stderr_lines[0]}" = "klog-serve: $TMP/bad.conf:2: unknown key \"nope\"" ]
	printf 'flush-ms = never\n' >"$TMP/bad.conf"
	run -64 --separate-stderr klog-serve -c "$TMP/bad.conf"
	[ "${stderr_lines[0]}" = "klog-serve: $TMP/bad.conf:1: flush-ms never: invalid" ]
	printf 'just words\n' >"$TMP/bad.conf"
	run -64 --separate-stderr klog-serve -c "$TMP/bad.conf"
	[ "${stderr_lines[0]}" = "klog-serve: $TMP/bad.conf:1: expected \"key = value\"" ]
}

@test "serve: KLOG_DATA_DIR is the default data directory; -d beats it" {
	KLOG_DATA_DIR="$TMP/envdata" serve
	grep -q "data in $TMP/envdata\$" "$TMP/serve.log"
	stop_serve
	[ -e "$TMP/envdata/.klog_cleanshutdown" ]
	SERVE_PORT=
	KLOG_DATA_DIR="$TMP/envdata" serve -d "$TMP/flagdata"
	grep -q "data in $TMP/flagdata\$" "$TMP/serve.log"
}

@test "serve: --topic creates topics at startup; --no-auto-create refuses others" {
	serve --topic ready:4 --no-auto-create
	run -0 klog-consume -L -t ready
	[ "${#lines[@]}" -eq 4 ]
	echo hi | klog-produce -t ready -p 3
	run -0 klog-consume -t ready -p 3 -o beginning -e
	[ "$output" = "hi" ]
	run -1 klog-produce -t unknown <<<"x"
	[ ! -e "$TMP/data/unknown-0" ]
}

@test "serve: --max-connections refuses clients past the limit and says so" {
	serve --max-connections 2
	python3 - "$SERVE_PORT" <<-'EOF'
	import socket, sys, time
	port = int(sys.argv[1])
	time.sleep(0.3)
	held = [socket.create_connection(("127.0.0.1", port)) for _ in range(2)]
	time.sleep(0.2)
	extra = socket.create_connection(("127.0.0.1", port))
	extra.settimeout(5)
	assert extra.recv(1) == b"", "the third connection was not closed"
	EOF
	grep -q 'refusing connections: 2 open' "$TMP/serve.log"
	# Once those are gone, clients are served again.
	echo back | klog-produce -t m
}

@test "serve: --max-open-segments bounds the segments held open, however many are read" {
	serve --segment-bytes 1K --max-open-segments 3 --topic s:2
	seq -f 'record-%06g' 1 4000 | klog-produce -q -t s --batch 10
	local segs
	segs=$(ls "$TMP"/data/s-*/ | grep -c '\.klog$')
	[ "$segs" -gt 60 ]
	# Every segment of both partitions is read, twice.
	for i in 1 2; do
		klog-consume -t s -o beginning -e | sort >"$TMP/out"
		cmp "$TMP/out" <(seq -f 'record-%06g' 1 4000 | sort)
	done
	# Two active segments and at most three older ones.
	local open
	open=$(ls -l "/proc/$SERVE_PID/fd" | grep -c '\.klog$')
	[ "$open" -le 5 ]
	[ "$open" -ge 2 ]
}

@test "serve: --crc-threads starts that many checking threads; batched produce goes in whole" {
	serve --crc-threads 0
	[ "$(grep -lx klog-verify /proc/"$SERVE_PID"/task/*/comm | wc -l)" -eq 0 ]
	stop_serve
	serve --crc-threads 3
	[ "$(grep -lx klog-verify /proc/"$SERVE_PID"/task/*/comm | wc -l)" -eq 3 ]
	# 2 MB in batches of 1,000: many requests a read.
	seq -f 'line-%07g' 1 200000 | klog-produce -q -t big --batch 1000
	klog-consume -t big -o beginning -e >"$TMP/out"
	cmp "$TMP/out" <(seq -f 'line-%07g' 1 200000)
}

@test "serve: SIGHUP stops as cleanly as SIGTERM: exit 0, the marker, no recovery" {
	serve
	seq 1 5 | klog-produce -t hup
	kill -HUP "$SERVE_PID"
	serve_rc=0
	wait "$SERVE_PID" || serve_rc=$?
	[ "$serve_rc" -eq 0 ]
	[ -e "$TMP/data/.klog_cleanshutdown" ]
	grep -q '^klog-serve: info: clean shutdown$' "$TMP/serve.log"
	serve
	! grep -q 'no clean-shutdown marker' "$TMP/serve.log"
	run -0 klog-consume -t hup -o beginning -e
	[ "$output" = "$(seq 1 5)" ]
}

@test "serve: make run takes LISTEN=host:port and DATA=dir" {
	local port mpid spid
	port=$(free_port)
	make -s -C "$KLOG_ROOT" run LISTEN="127.0.0.1:$port" \
		DATA="$TMP/run-data" >/dev/null 2>>"$TMP/serve.log" &
	mpid=$!
	PIDS+=("$mpid")
	wait_port "$port" 60 || { cat "$TMP/serve.log" >&2; false; }
	# The recipe execs klog-serve: make's one child.
	spid=$(ps -o pid= --ppid "$mpid" | tr -d ' ')
	[ -n "$spid" ]
	PIDS+=("$spid")
	seq 1 3 | klog-produce -b "127.0.0.1:$port" -t mr -a all
	[ -d "$TMP/run-data/mr-0" ]
	run -0 klog-consume -b "127.0.0.1:$port" -t mr -o beginning -e
	[ "$output" = "$(seq 1 3)" ]
	kill -TERM "$spid"
	wait "$mpid"
	[ -e "$TMP/run-data/.klog_cleanshutdown" ]
}
