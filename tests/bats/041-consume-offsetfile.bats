#!/usr/bin/env bats
# klog-consume --offset-file: resuming without loss after a clean stop
# (TERM, INT) and after kill -9, and the file's format.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	common_setup
}

teardown() {
	common_teardown
}

# wait_lines FILE N SECONDS: until FILE has at least N lines.
wait_lines() {
	local n=$(( $3 * 10 ))
	while [ "$(wc -l <"$1" 2>/dev/null || echo 0)" -lt "$2" ]; do
		[ "$n" -gt 0 ] || return 1
		sleep 0.1
		n=$((n - 1))
	done
}

# trickle TOPIC FROM TO [PAUSE]: produce FROM..TO in 20 slices, PAUSE
# seconds (0.05) apart, so that a consumer can be stopped while records
# are still coming.
trickle() {
	local from=$2 to=$3 pause=${4:-0.05} step i
	step=$(( (to - from + 1) / 20 ))
	for (( i = from; i <= to; i += step )); do
		seq "$i" $(( i + step - 1 < to ? i + step - 1 : to )) |
			klog-produce -t "$1" -q || return 1
		sleep "$pause"
	done
}

@test "offset file: a run that ends resumes where it stopped, and the file says where" {
	start_broker
	seq 1 100 | klog-produce -t o
	run -0 klog-consume -t o --offset-file "$TMP/off" -c 40
	[ "${#lines[@]}" -eq 40 ]
	[ "${lines[39]}" = "40" ]
	# 9 one-digit records of 10 bytes, 31 two-digit ones of 11.
	[ "$(grep -v '^#' "$TMP/off")" = "o	0	431" ]
	run -0 klog-consume -t o --offset-file "$TMP/off" -e
	[ "${#lines[@]}" -eq 60 ]
	[ "${lines[0]}" = "41" ]
	run -0 klog-consume -t o --offset-file "$TMP/off" -e
	[ -z "$output" ]
	# An explicit -o wins over the file, which then follows it.
	run -0 klog-consume -t o --offset-file "$TMP/off" -o beginning -c 1
	[ "$output" = "1" ]
	[ "$(grep -v '^#' "$TMP/off")" = "o	0	10" ]
	[ -z "$(ls "$TMP" | grep '^off\.tmp')" ]
}

@test "offset file: SIGTERM mid-stream, then resume: every record once" {
	start_broker
	echo 0 | klog-produce -t s
	trickle s 1 20000 &
	local prod=$!
	klog-consume -t s --offset-file "$TMP/off" >"$TMP/out1" &
	local cons=$!
	PIDS+=("$prod" "$cons")
	wait_lines "$TMP/out1" 3000 30
	kill -TERM "$cons"
	wait "$cons"	# exit status 0 after a signal
	wait "$prod"
	klog-consume -t s --offset-file "$TMP/off" -e >"$TMP/out2"
	[ -s "$TMP/out2" ]
	cat "$TMP/out1" "$TMP/out2" >"$TMP/all"
	cmp "$TMP/all" <(seq 0 20000)
}

@test "offset file: kill -9 mid-stream, then resume: no gap (repeats allowed)" {
	start_broker
	echo 0 | klog-produce -t k
	# Slow enough that the kill lands while records are still coming.
	trickle k 1 20000 0.25 &
	local prod=$!
	klog-consume -t k --offset-file "$TMP/off" >"$TMP/out1" &
	local cons=$!
	PIDS+=("$prod" "$cons")
	wait_lines "$TMP/out1" 3000 30
	sleep 1.2	# at least one periodic save
	kill -KILL "$cons"
	wait "$prod"
	klog-consume -t k --offset-file "$TMP/off" -e >"$TMP/out2"
	# kill -9 can cut stdout's buffer mid-line: keep whole lines only.
	if [ -n "$(tail -c 1 "$TMP/out1")" ]; then
		sed -i '$d' "$TMP/out1"
	fi
	cmp <(sort -n -u "$TMP/out1" "$TMP/out2") <(seq 0 20000)
	# Nothing left to read means the file said the end: the first run had
	# it all. Otherwise the second run starts at or before where the first
	# got to, and what it wrote is in order, with nothing missing.
	[ -s "$TMP/out2" ] || return 0
	local last first
	last=$(tail -n 1 "$TMP/out1")
	first=$(head -n 1 "$TMP/out2")
	[ "$first" -le $(( last + 1 )) ]
	cmp "$TMP/out2" <(seq "$first" 20000)
}

@test "offset file: a malformed file is refused (65); -o does not mend it" {
	start_broker
	echo x | klog-produce -t m
	printf 'm 0\n' >"$TMP/off"
	run -65 --separate-stderr klog-consume -t m --offset-file "$TMP/off" -e
	[ "$stderr" = "klog-consume: $TMP/off:1: expected: topic, partition, offset" ]
}

@test "offset file: other topics' lines are kept" {
	start_broker
	seq 1 3 | klog-produce -t a
	printf 'other\t3\t77\n' >"$TMP/off"
	run -0 klog-consume -t a --offset-file "$TMP/off" -e
	[ "${#lines[@]}" -eq 3 ]
	grep -q '^other	3	77$' "$TMP/off"
	grep -q '^a	0	30$' "$TMP/off"
}

@test "offset file: one that cannot be written: the output, one line, exit 74" {
	start_broker
	seq 1 3 | klog-produce -t w
	run -74 --separate-stderr klog-consume -t w -e \
		--offset-file /proc/self/klog-offsets
	[ "$output" = "1
2
3" ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "klog-consume: /proc/self/klog-offsets"* ]]
}

@test "offset file: SIGHUP is a clean stop too: exit 0, the file saved, resume" {
	start_broker
	seq 1 100 | klog-produce -t h
	klog-consume -t h --offset-file "$TMP/off" >"$TMP/out1" &
	local cons=$!
	PIDS+=("$cons")
	wait_lines "$TMP/out1" 100 10
	kill -HUP "$cons"
	wait "$cons"	# exit status 0 after a hangup; it used to die of it
	seq 101 110 | klog-produce -t h
	run -0 klog-consume -t h --offset-file "$TMP/off" -e
	[ "$output" = "$(seq 101 110)" ]
}
