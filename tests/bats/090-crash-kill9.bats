#!/usr/bin/env bats
# Crash safety: klog-serve killed with -9 at random moments during an
# acks=all produce, round after round, with torn tails as a power loss
# could leave them; and the broker starting while klog-retain deletes
# segments under it.

bats_require_minimum_version 1.5.0
load helpers

DRIVERS="$KLOG_ROOT/tests/drivers"

setup() {
	common_setup
}

teardown() {
	common_teardown
}

@test "crash: 10 rounds of kill -9 mid-produce: every acknowledged batch once, in order, nothing corrupt" {
	# tests/drivers/crash.py says what each round does and checks.
	mkdir "$TMP/data"
	python3 "$DRIVERS/crash.py" "$BIN/klog-serve" "$BIN/klog-consume" \
		"$TMP/data" "$(free_port)" 10 "${KLOG_CRASH_SEED:-1}" \
		>"$TMP/summary" &
	PIDS+=($!)
	wait $!
	cat "$TMP/summary"
	grep -q '^crash: 10 rounds of kill -9, [1-9][0-9]* of ' "$TMP/summary"
	# Tails were torn, and recovery cut them.
	grep -q ', [1-9][0-9]* tails torn, [1-9][0-9]* bytes cut' "$TMP/summary"
	# After the final clean stop nothing on disk is damaged.
	run -0 klog-dump --verify --deep "$TMP/data/crash-0" "$TMP/data/crash-1"
}

@test "crash: a torn tail is cut at the last whole entry, and the log says how much" {
	start_broker
	seq 1 50 | klog-produce -t t -a all
	kill -KILL "$BROKER_PID"
	wait "$BROKER_PID" || true
	local seg="$BROKER_DATA/t-0/00000000000000000000.klog"
	local size
	size=$(stat -c %s "$seg")
	# Half an entry header, then the first 7 bytes of a copy of the
	# first entry (its length says 10 more bytes follow).
	head -c 7 "$seg" >>"$seg"
	run -1 klog-dump --verify "$BROKER_DATA/t-0"
	run -0 klog-dump --verify --allow-partial "$BROKER_DATA/t-0"
	start_broker
	grep -q "^klog-serve: warn: topic \"t\" partition 0: recovery truncated 7 bytes at offset $size, kept in $BROKER_DATA/t-0/$(printf %020d "$size").salvage (klog-dump --salvage)\$" "$TMP/broker.log"
	[ "$(stat -c %s "$seg")" -eq "$size" ]
	run -0 klog-consume -t t -o beginning -e
	[ "$output" = "$(seq 1 50)" ]
	run -0 klog-dump --verify "$BROKER_DATA/t-0"
}

@test "crash: the broker starts while klog-retain deletes the segments it lists" {
	# 3000 one-entry segments per round, and a klog-retain run deleting
	# all but the newest while the broker lists and stats them: the
	# broker must start every time (neither a vanished file nor the gap
	# it leaves is corruption) and serve the newest segment.
	local d="$TMP/data" port rp i n
	port=$(free_port)
	mkdir "$d"
	: >"$d/.klog_cleanshutdown"
	for i in 1 2 3; do
		python3 - "$d/race-0" 3000 <<-'EOF'
		import os, struct, sys, zlib
		d, n = sys.argv[1], int(sys.argv[2])
		os.makedirs(d, exist_ok=True)
		end = 0
		for f in os.listdir(d):
		    if f.endswith(".klog"):
		        end = max(end, int(f[:20]) + os.path.getsize(os.path.join(d, f)))
		for i in range(n):
		    p = b"segment %08d" % end
		    e = struct.pack(">IBI", 5 + len(p), 0, zlib.crc32(p)) + p
		    with open("%s/%020d.klog" % (d, end), "wb") as f:
		        f.write(e)
		    end += len(e)
		EOF
		klog-retain -q -d "$d" --max-bytes 100 >/dev/null &
		rp=$!
		klog-serve -q -d "$d" -l "127.0.0.1:$port" \
			--retention-hours off 2>>"$TMP/serve.log" &
		SERVE_PID=$!
		PIDS+=("$rp" "$SERVE_PID")
		n=100
		until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
			kill -0 "$SERVE_PID" 2>/dev/null || {
				cat "$TMP/serve.log" >&2
				false
			}
			n=$((n - 1))
			[ "$n" -gt 0 ]
			sleep 0.05
		done
		wait "$rp"
		kill -TERM "$SERVE_PID"
		wait "$SERVE_PID"
	done
	# Nothing but the recovery of the segments added between runs (the
	# marker's recorded end no longer matches) was worth a line.
	! grep -v ': changed since the clean shutdown: recovered 1 partition, 0 bytes truncated$' "$TMP/serve.log"
	# What is left is one whole partition.
	run -0 klog-dump --verify "$d/race-0"
}
