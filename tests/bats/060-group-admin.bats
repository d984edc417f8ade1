#!/usr/bin/env bats
# klog-group against a real ZooKeeper and a hand-built Kafka 0.7 layout.
# One server for the file; each test works under its own chroot.

bats_require_minimum_version 1.5.0
load helpers

# A stand-in broker that answers OFFSETS requests (api 4) only:
# latest = BASE + 100 * partition, earliest = 10 * partition, and for a
# time >= 5000 ms the offset 500 + partition (nothing older).
fake_broker() {
	python3 - "$1" "$2" <<'PY' &
import socket, struct, sys, threading
port, base = int(sys.argv[1]), int(sys.argv[2])
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port))
srv.listen(16)

def recvn(c, n):
    b = b""
    while len(b) < n:
        x = c.recv(n - len(b))
        if not x:
            raise EOFError
        b += x
    return b

def serve(c):
    try:
        while True:
            size, = struct.unpack(">i", recvn(c, 4))
            req = recvn(c, size)
            api, ver, corr = struct.unpack(">hhi", req[:8])
            if api != 4:
                c.sendall(struct.pack(">iih", 6, corr, 13))
                continue
            n, = struct.unpack(">i", req[8:12])
            pos, out = 12, b""
            for _ in range(n):
                tl, = struct.unpack(">h", req[pos:pos + 2])
                topic = req[pos + 2:pos + 2 + tl]
                part, t, mx = struct.unpack(">iqi", req[pos + 2 + tl:pos + 18 + tl])
                pos += 18 + tl
                if t == -1:
                    offs = [base + 100 * part]
                elif t == -2:
                    offs = [10 * part]
                elif t >= 5000:
                    offs = [500 + part]
                else:
                    offs = []
                out += struct.pack(">h", tl) + topic + struct.pack(">ihi", part, 0, len(offs))
                out += b"".join(struct.pack(">q", o) for o in offs)
            body = struct.pack(">ih", corr, 0) + struct.pack(">i", n) + out
            c.sendall(struct.pack(">i", len(body)) + body)
    except (EOFError, OSError):
        pass
    finally:
        c.close()

while True:
    c, _ = srv.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
	PIDS+=($!)
	wait_port "$1" 5
}

# layout: zk_nodes under this test's chroot.
layout() {
	sed "s|^|$ROOT|" | zk_nodes "$ZK"
}

# A group "g1" on topic "app": broker 1 (a fake broker, 2 partitions) and
# broker 2 (registered, nobody listening, 1 partition); offsets for 1-0,
# 1-1 and for 3-0 (a broker gone); an owner for 1-0; an empty group "g2".
standard_layout() {
	BPORT=$(free_port)
	DEAD=$(free_port)
	fake_broker "$BPORT" 1000
	layout <<-EOF
	/brokers/ids/1 127.0.0.1-1:127.0.0.1:$BPORT
	/brokers/ids/2 127.0.0.1-1:127.0.0.1:$DEAD
	/brokers/topics/app/1 2
	/brokers/topics/app/2 1
	/consumers/g1/ids
	/consumers/g1/offsets/app/1-0 400
	/consumers/g1/offsets/app/1-1 250
	/consumers/g1/offsets/app/3-0 7
	/consumers/g1/owners/app/1-0 g1_h-1-abcdef01-0
	/consumers/g2/ids
	EOF
}

setup_file() {
	start_zk
}

teardown_file() {
	stop_zk
}

setup() {
	common_setup
	ROOT="/t$BATS_TEST_NUMBER"
	export KLOG_ZOOKEEPER="$ZK$ROOT"
}

teardown() {
	common_teardown
}

@test "group: -h prints usage with every command, --version" {
	run klog-group -h
	[ "$status" -eq 0 ]
	for c in list describe reset delete topics brokers; do
		[[ $output == *"  $c"* ]]
	done
	run klog-group --version
	[ "$status" -eq 0 ]
	[ "$output" = "klog-group 0.1.0" ]
}

@test "group: bad usage exits 64" {
	run klog-group
	[ "$status" -eq 64 ]
	[[ $output == *"Try 'klog-group -h'"* ]]
	run klog-group frobnicate
	[ "$status" -eq 64 ]
	run klog-group describe
	[ "$status" -eq 64 ]
	[[ $output == *"describe needs -g"* ]]
	run klog-group reset -g g -t app --to-latest
	[ "$status" -eq 64 ]
	run klog-group reset -g g -t app --to-latest -n --execute
	[ "$status" -eq 64 ]
	run klog-group reset -g g -t app --to-latest --to-earliest -n
	[ "$status" -eq 64 ]
	run klog-group reset -g g -t app --to-offset -5 -n
	[ "$status" -eq 64 ]
	run klog-group reset -g g -t app --to-time yesterday -n
	[ "$status" -eq 64 ]
	run klog-group reset -g g -t app -n
	[ "$status" -eq 64 ]
	run klog-group list -g g
	[ "$status" -eq 64 ]
	run klog-group delete -g g --force
	[ "$status" -eq 64 ]
	run klog-group describe -g a/b
	[ "$status" -eq 64 ]
	run klog-group describe -g g -t ..
	[ "$status" -eq 64 ]
	run klog-group -T 0 list
	[ "$status" -eq 64 ]
	run klog-group -Z 127.0.0.1 list
	[ "$status" -eq 64 ]
	run klog-group -Z "$ZK/" list
	[ "$status" -eq 64 ]
	KLOG_ZOOKEEPER= run klog-group list
	[ "$status" -eq 64 ]
	[[ $output == *KLOG_ZOOKEEPER* ]]
}

@test "group: ZooKeeper unreachable exits 69 after the timeout" {
	port=$(free_port)
	run klog-group -Z "127.0.0.1:$port" -T 1s list
	[ "$status" -eq 69 ]
	[[ $output == *"127.0.0.1:$port"* ]]
	[ "${#lines[@]}" -eq 1 ]
}

@test "group: list shows groups and live members; -H and -J" {
	run klog-group list
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'GROUP\tMEMBERS')" ]
	standard_layout
	zk_hold "$ROOT/consumers/g1/ids/g1_h-1-abcdef01" '{ "app": 1 }'
	run klog-group list
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$(printf 'GROUP\tMEMBERS')" ]
	[ "${lines[1]}" = "$(printf 'g1\t1')" ]
	[ "${lines[2]}" = "$(printf 'g2\t0')" ]
	run klog-group -H list
	[ "$output" = "$(printf 'g1\t1\ng2\t0')" ]
	run bash -c 'klog-group list >/dev/full'
	[ "$status" -eq 74 ]
	[[ $output == *"stdout"* ]]
	run klog-group list -J
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq -r '"\(.group)=\(.members)"' | tr '\n' ' ')" = "g1=1 g2=0 " ]
}

@test "group: describe shows offsets, log ends from the broker, lag and owners" {
	standard_layout
	run klog-group describe -g g1
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$(printf 'GROUP\tTOPIC\tPARTITION\tCURRENT\tLOG_END\tLAG_BYTES\tOWNER')" ]
	[ "${lines[1]}" = "$(printf 'g1\tapp\t1-0\t400\t1000\t600\tg1_h-1-abcdef01-0')" ]
	[ "${lines[2]}" = "$(printf 'g1\tapp\t1-1\t250\t1100\t850\t-')" ]
	[ "${lines[3]}" = "$(printf 'g1\tapp\t2-0\t-\t-\t-\t-')" ]
	[ "${lines[4]}" = "$(printf 'g1\tapp\t3-0\t7\t-\t-\t-')" ]
	[ "${#lines[@]}" -eq 5 ]
	# -H for awk: total lag
	run bash -c "klog-group -H describe -g g1 | awk -F'\t' '\$6 != \"-\" { s += \$6 } END { print s }'"
	[ "$output" = "1450" ]
	run klog-group describe -g g1 -t app -J
	[ "$status" -eq 0 ]
	[ "$(echo "${lines[0]}" | jq -c .)" = '{"group":"g1","topic":"app","partition":"1-0","current":400,"log_end":1000,"lag_bytes":600,"owner":"g1_h-1-abcdef01-0"}' ]
	[ "$(echo "${lines[2]}" | jq -c '[.current,.log_end,.lag_bytes,.owner]')" = '[null,null,null,null]' ]
}

@test "group: describe of a missing group fails" {
	standard_layout
	run klog-group describe -g nosuch
	[ "$status" -eq 1 ]
	[[ $output == *'group "nosuch": no such group'* ]]
}

@test "group: reset --dry-run changes nothing, --execute writes" {
	standard_layout
	run --separate-stderr klog-group reset -g g1 -t app --to-offset 42 --dry-run
	[ "$status" -eq 0 ]
	[[ $stderr == *"dry run: nothing changed"* ]]
	[ "${lines[0]}" = "$(printf 'GROUP\tTOPIC\tPARTITION\tBEFORE\tAFTER')" ]
	[ "${lines[1]}" = "$(printf 'g1\tapp\t1-0\t400\t42')" ]
	[ "${lines[3]}" = "$(printf 'g1\tapp\t2-0\t-\t42')" ]
	run klog-group -H describe -g g1
	[ "$(echo "$output" | cut -f3,4 | tr '\n\t' ' =')" = "1-0=400 1-1=250 2-0=- 3-0=7 " ]

	run klog-group reset -g g1 -t app --to-offset 42 --execute
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = "$(printf 'g1\tapp\t1-0\t400\t42')" ]
	run klog-group -H describe -g g1
	[ "$(echo "$output" | cut -f3,4 | tr '\n\t' ' =')" = "1-0=42 1-1=42 2-0=42 3-0=42 " ]
}

@test "group: reset to earliest, latest and a time asks the brokers" {
	BPORT=$(free_port)
	fake_broker "$BPORT" 5000
	layout <<-EOF
	/brokers/ids/1 127.0.0.1-1:127.0.0.1:$BPORT
	/brokers/topics/app/1 2
	/consumers/g1/offsets/app/1-0 400
	EOF
	run klog-group -H reset -g g1 -t app --to-latest --execute
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'g1\tapp\t1-0\t400\t5000\ng1\tapp\t1-1\t-\t5100')" ]
	run klog-group -H reset -g g1 -t app --to-earliest --execute
	[ "$output" = "$(printf 'g1\tapp\t1-0\t5000\t0\ng1\tapp\t1-1\t5100\t10')" ]
	run --separate-stderr klog-group -H reset -g g1 -t app --to-time 1970-01-01T00:00:06Z -n
	[ "$output" = "$(printf 'g1\tapp\t1-0\t0\t500\ng1\tapp\t1-1\t10\t501')" ]
	# Older than anything the broker has: its earliest.
	run --separate-stderr klog-group -H -J reset -g g1 -t app --to-time 10 -n
	[ "$(echo "$output" | jq -c '[.before,.after]' | tr '\n' ' ')" = "[0,0] [10,10] " ]
}

@test "group: reset needing an unavailable broker exits 69 and writes nothing" {
	standard_layout
	run klog-group reset -g g1 -t app --to-latest --execute
	[ "$status" -eq 69 ]
	[[ $output == *'topic "app" partition 2-0: broker 2: '* ]]
	run klog-group -H describe -g g1 -t app
	[ "$(echo "$output" | cut -f3,4 | tr '\n\t' ' =')" = "1-0=400 1-1=250 2-0=- 3-0=7 " ]
}

@test "group: reset and delete are refused while members are live" {
	standard_layout
	zk_hold "$ROOT/consumers/g1/ids/g1_h-1-abcdef01" '{ "app": 1 }'
	run klog-group reset -g g1 -t app --to-offset 0 --execute
	[ "$status" -eq 1 ]
	[[ $output == *"1 live member"*"--force"* ]]
	run klog-group reset -g g1 -t app --to-offset 0 -n
	[ "$status" -eq 1 ]
	run klog-group delete -g g1
	[ "$status" -eq 1 ]
	[[ $output == *"live member"* ]]
	run klog-group -H describe -g g1 -t app
	[ "$(echo "$output" | cut -f3,4 | tr '\n\t' ' =')" = "1-0=400 1-1=250 2-0=- 3-0=7 " ]

	run klog-group reset -g g1 -t app --to-offset 0 --execute --force
	[ "$status" -eq 0 ]
	run klog-group -H describe -g g1 -t app
	[ "$(echo "$output" | cut -f4 | tr '\n' ' ')" = "0 0 0 0 " ]
}

@test "group: delete removes a group without live members" {
	standard_layout
	run klog-group delete -g g1
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run klog-group -H list
	[ "$output" = "$(printf 'g2\t0')" ]
	run klog-group describe -g g1
	[ "$status" -eq 1 ]
	run klog-group delete -g g1
	[ "$status" -eq 1 ]
	[[ $output == *"no such group"* ]]
}

@test "group: topics and brokers show the registrations" {
	standard_layout
	run klog-group topics
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$(printf 'TOPIC\tPARTITION\tBROKER\tADDRESS')" ]
	[ "${lines[1]}" = "$(printf 'app\t1-0\t1\t127.0.0.1:%s' "$BPORT")" ]
	[ "${lines[2]}" = "$(printf 'app\t1-1\t1\t127.0.0.1:%s' "$BPORT")" ]
	[ "${lines[3]}" = "$(printf 'app\t2-0\t2\t127.0.0.1:%s' "$DEAD")" ]
	[ "${#lines[@]}" -eq 4 ]
	run klog-group -J topics -t app
	[ "$(echo "${lines[2]}" | jq -c '[.partition,.broker]')" = '["2-0",2]' ]
	run klog-group topics -t nosuch
	[ "$status" -eq 1 ]
	run klog-group -H brokers
	[ "$output" = "$(printf '1\t127.0.0.1\t%s\n2\t127.0.0.1\t%s' "$BPORT" "$DEAD")" ]
}

@test "group: the man page's examples run" {
	BPORT=$(free_port)
	fake_broker "$BPORT" 2000000
	layout <<-EOF
	/brokers/ids/1 127.0.0.1-1:127.0.0.1:$BPORT
	/brokers/topics/clicks/1 2
	/consumers/audit/offsets/clicks/1-0 100
	/consumers/audit/offsets/clicks/1-1 0
	EOF
	run klog-group -Z "127.0.0.1:$(free_port),$ZK$ROOT" list
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = "$(printf 'audit\t0')" ]
	run bash -c "klog-group -H describe -g audit | awk -F'\t' '\$6 != \"-\" { s += \$6 } END { print s }'"
	[ "$output" = "4000000" ]
	run bash -c "klog-group -J describe -g audit | jq -c 'select(.lag_bytes > 1048576)' | wc -l"
	[ "$output" = "2" ]
	run klog-group reset -g audit -t clicks --to-time 2024-05-01T00:00:00Z -n
	[ "$status" -eq 0 ]
	run klog-group reset -g audit -t clicks --to-time 2024-05-01T00:00:00Z --execute
	[ "$status" -eq 0 ]
	[ "${lines[2]}" = "$(printf 'audit\tclicks\t1-1\t0\t501')" ]
	run klog-group reset -g audit -t clicks --to-latest --execute
	[ "$status" -eq 0 ]
	run klog-group -H describe -g audit
	[ "$(echo "$output" | cut -f6 | tr '\n' ' ')" = "0 0 " ]
}

# A replicated topic "rt" (its /klog/topics nodes written by hand): three
# partitions, 0 led by broker 1 (fake, base 1000), 1 by broker 2 (fake,
# base 5000), 2 without a leader (an election); group g3 has offsets for
# 0 and 1, named by number.
replicated_layout() {
	BPORT=$(free_port)
	BPORT2=$(free_port)
	fake_broker "$BPORT" 1000
	fake_broker "$BPORT2" 5000
	layout <<-EOF
	/brokers/ids/1 127.0.0.1-1:127.0.0.1:$BPORT
	/brokers/ids/2 127.0.0.1-1:127.0.0.1:$BPORT2
	/klog/topics/rt {"version":1,"partitions":{"0":[1,2],"1":[2,1],"2":[1,2]},"min_insync":1}
	/klog/topics/rt/partitions/0/leader 1
	/klog/topics/rt/partitions/1/leader 2
	/klog/topics/rt/partitions/2/state {"version":1,"isr":[1,2],"leader":1,"controller_epoch":-1,"leader_epoch":0}
	/consumers/g3/ids
	/consumers/g3/offsets/rt/0 400
	/consumers/g3/offsets/rt/1 5050
	EOF
}

@test "group: describe and reset a replicated topic: partitions by number, ends from each leader" {
	replicated_layout
	run klog-group describe -g g3
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = "$(printf 'g3\trt\t0\t400\t1000\t600\t-')" ]
	[ "${lines[2]}" = "$(printf 'g3\trt\t1\t5050\t5100\t50\t-')" ]
	[ "${lines[3]}" = "$(printf 'g3\trt\t2\t-\t-\t-\t-')" ]
	[ "${#lines[@]}" -eq 4 ]
	# A partition without a leader cannot be reset: unavailable.
	run klog-group reset -g g3 -t rt --to-latest --execute
	[ "$status" -eq 69 ]
	[[ $output == *'topic "rt" partition 2: no leader'* ]]
	[ "${#lines[@]}" -eq 1 ]
	layout <<-EOF
	/klog/topics/rt/partitions/2/leader 1
	EOF
	run klog-group reset -g g3 -t rt --to-latest --execute
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = "$(printf 'g3\trt\t0\t400\t1000')" ]
	[ "${lines[3]}" = "$(printf 'g3\trt\t2\t-\t1200')" ]
	run klog-group describe -g g3 -t rt -J
	[ "$(echo "${lines[2]}" | jq -c '[.partition,.current,.log_end]')" = '["2",1200,1200]' ]
}
