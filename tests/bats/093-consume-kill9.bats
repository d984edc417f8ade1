#!/usr/bin/env bats
# klog-consume --offset-file killed with -9 again and again while records
# keep coming into three partitions (041 has one round on one partition):
# every restart resumes at or before where the last run got to in each
# partition, so across all runs nothing is missing; each run's output is
# contiguous per partition; and the offset file is whole after every kill.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	common_setup
}

teardown() {
	common_teardown
}

# trickle N: 1..N in batches of 100 to topic k, a little apart.
trickle() {
	local i
	for (( i = 1; i <= $1; i += 100 )); do
		seq "$i" $(( i + 99 )) | klog-produce -q -t k --batch 100 ||
			return 1
		sleep 0.01
	done
}

# check RUN_FILES...: every run contiguous per partition from at or before
# the furthest point earlier runs got to; everything read by the end.
check_runs() {
	python3 - "$@" <<-'EOF'
	import sys
	high = {}        # partition -> furthest next offset seen
	seen = set()
	for n, path in enumerate(sys.argv[1:]):
	    data = open(path, "rb").read()
	    lines = data.split(b"\n")
	    # A kill can cut the last line short: it has no newline.
	    lines = lines[:-1]
	    first, prev = {}, {}
	    for line in lines:
	        p, off, nxt, rec = line.split(b"\t")
	        p, off, nxt = int(p), int(off), int(nxt)
	        if p not in first:
	            first[p] = off
	            assert off <= high.get(p, 0), \
	                "run %d partition %d starts at %d, past %d" % (n, p, off, high.get(p, 0))
	        else:
	            assert off == prev[p], \
	                "run %d partition %d: %d after %d" % (n, p, off, prev[p])
	        prev[p] = nxt
	        seen.add(int(rec))
	    for p, nxt in prev.items():
	        high[p] = max(high.get(p, 0), nxt)
	missing = set(range(1, 30001)) - seen
	assert not missing, "never read: %d records, e.g. %d" % (len(missing), min(missing))
	print("runs %d, records %d" % (len(sys.argv) - 1, len(seen)))
	EOF
}

@test "kill -9: a following consumer killed 12 times resumes each partition with no gap" {
	start_broker --topic k:3
	trickle 30000 &
	local prod=$!
	PIDS+=("$prod")
	local i cons runs=()
	for i in $(seq 1 12); do
		klog-consume -t k --offset-file "$TMP/off" \
			-f '%p\t%o\t%O\t%s\n' >"$TMP/run.$i" 2>>"$TMP/cons.err" &
		cons=$!
		PIDS+=("$cons")
		# Some rounds are killed before the first periodic save, some
		# after one or more.
		sleep "$(python3 -c "import random; print(random.choice([0.05, 0.3, 0.7, 1.3]))")"
		kill -KILL "$cons"
		wait "$cons" || true
		runs+=("$TMP/run.$i")
		# The offset file is whole: the last save, or none yet.
		if [ -e "$TMP/off" ]; then
			[ -z "$(grep -v '^#' "$TMP/off" | awk -F '\t' 'NF != 3')" ]
		fi
		[ ! -s "$TMP/cons.err" ]
	done
	wait "$prod"
	klog-consume -t k --offset-file "$TMP/off" -e \
		-f '%p\t%o\t%O\t%s\n' >"$TMP/run.last"
	runs+=("$TMP/run.last")
	run -0 check_runs "${runs[@]}"
	echo "# $output" >&3
	# And a run after a clean end starts exactly where it stopped.
	run -0 klog-consume -t k --offset-file "$TMP/off" -e
	[ -z "$output" ]
}

@test "kill -9: a consumer killed while blocked writing to a stalled reader loses nothing" {
	start_broker
	seq 1 200000 | klog-produce -q -t s
	mkfifo "$TMP/fifo"
	# The reader opens the pipe at once but reads only later: the
	# consumer fills the pipe and blocks in write(2), mid-batch.
	{ exec 3<"$TMP/fifo"; sleep 2; cat <&3 >"$TMP/part"; } &
	local reader=$!
	klog-consume -t s --offset-file "$TMP/off" -e >"$TMP/fifo" &
	local cons=$!
	PIDS+=("$reader" "$cons")
	sleep 1.5
	kill -KILL "$cons"
	wait "$cons" || true
	wait "$reader"
	# The pipe may end inside a line.
	[ -z "$(tail -c 1 "$TMP/part")" ] || sed -i '$d' "$TMP/part"
	[ -s "$TMP/part" ]
	# Resuming from the file reaches the end, and what was read plus
	# what comes has every record; the rest is contiguous.
	klog-consume -t s --offset-file "$TMP/off" -e >"$TMP/rest"
	cat "$TMP/part" "$TMP/rest" | sort -n -u | cmp - <(seq 1 200000)
	local first
	first=$(head -n 1 "$TMP/rest")
	cmp "$TMP/rest" <(seq "$first" 200000)
}
