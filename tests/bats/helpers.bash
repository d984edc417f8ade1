# Shared by every bats suite: temp dirs, free ports, and processes started
# by a test and killed by their pid (never by name).

KLOG_ROOT="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
BIN="$KLOG_ROOT/bin"
DATA="$KLOG_ROOT/tests/data"
export PATH="$BIN:$PATH"

common_setup() {
	TMP="$(mktemp -d "${BATS_TMPDIR:-/tmp}/klog.XXXXXX")"
	PIDS=()
}

common_teardown() {
	local pid
	for pid in "${PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null
	done
	for pid in "${PIDS[@]}"; do
		wait_gone "$pid" 5 || kill -KILL "$pid" 2>/dev/null
	done
	rm -rf "$TMP"
}

# A TCP port on 127.0.0.1 that nothing listens on right now.
free_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()'
}

# wait_gone PID SECONDS: wait until the process has exited.
wait_gone() {
	local pid=$1 n=$(( ${2:-5} * 20 ))
	while kill -0 "$pid" 2>/dev/null && [ "$n" -gt 0 ]; do
		sleep 0.05
		n=$((n - 1))
	done
	! kill -0 "$pid" 2>/dev/null
}

# wait_mirror_producer PID ERRFILE: the producer of a mirror whose consumer
# was killed -9 ends well, or with 65 because the kill cut the last
# envelope in the pipe, as its last message says.
wait_mirror_producer() {
	wait "$1" && return 0
	[ $? -eq 65 ] && tail -n 1 "$2" |
		grep -q 'the input ends inside it, with no newline'
}

# wait_port PORT SECONDS: wait until something accepts on 127.0.0.1:PORT.
wait_port() {
	local port=$1 n=$(( ${2:-5} * 20 ))
	while [ "$n" -gt 0 ]; do
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
		sleep 0.05
		n=$((n - 1))
	done
	return 1
}

# start_zk: a throwaway standalone ZooKeeper on a free port, in a temp dir
# (tickTime=500, so sessions last 1-10 s).  Sets ZK_PORT, ZK_PID (the JVM:
# zkServer.sh execs java), ZK_DIR and ZK=127.0.0.1:$ZK_PORT, records the pid
# in PIDS, and returns once the server serves requests.  From setup_file,
# call stop_zk in teardown_file.
start_zk() {
	local try
	for try in 1 2 3; do
		ZK_DIR="$(mktemp -d "${TMP:-${BATS_FILE_TMPDIR:-/tmp}}/zk.XXXXXX")"
		ZK_PORT="$(free_port)"
		mkdir -p "$ZK_DIR/data"
		cat >"$ZK_DIR/zoo.cfg" <<-CFG
		tickTime=500
		dataDir=$ZK_DIR/data
		clientPort=$ZK_PORT
		clientPortAddress=127.0.0.1
		admin.enableServer=false
		minSessionTimeout=1000
		maxSessionTimeout=10000
		maxClientCnxns=0
		forceSync=no
		4lw.commands.whitelist=srvr
		CFG
		JMXDISABLE=true /usr/share/zookeeper/bin/zkServer.sh \
			start-foreground "$ZK_DIR/zoo.cfg" >"$ZK_DIR/log" 2>&1 &
		ZK_PID=$!
		PIDS+=("$ZK_PID")
		ZK="127.0.0.1:$ZK_PORT"
		export ZK ZK_PORT ZK_PID ZK_DIR
		wait_zk "$ZK_PORT" 30 && return 0
		stop_zk	# lost a race for the port, or did not start
	done
	return 1
}

# wait_zk PORT SECONDS: until the server there answers srvr with a Mode
# (the port opens half a second before it serves requests).
wait_zk() {
	local port=$1 n=$(( ${2:-10} * 10 )) reply
	while [ "$n" -gt 0 ]; do
		[ -n "${ZK_PID:-}" ] && ! kill -0 "$ZK_PID" 2>/dev/null &&
			return 1
		# A server still starting may accept and never answer: bound
		# each try, or the suite hangs.
		reply=$(timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" &&
			echo srvr >&3 && cat <&3' _ "$port" 2>/dev/null)
		case $reply in *Mode:*) return 0 ;; esac
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}

# stop_zk: kill the server started by start_zk and remove its directory.
stop_zk() {
	[ -n "${ZK_PID:-}" ] || return 0
	kill -KILL "$ZK_PID" 2>/dev/null
	wait_gone "$ZK_PID" 5
	rm -rf "$ZK_DIR"
	ZK_PID=
}

# zk_nodes [CONNECT]: create persistent nodes from stdin, one "PATH DATA"
# per line (DATA may hold spaces and double quotes, not single quotes;
# missing parents are created empty), in one zkCli.sh run, since each run
# starts a JVM.  CONNECT defaults to $ZK and may carry a chroot that exists.
zk_nodes() {
	local connect=${1:-$ZK} path data p part seen=" " parts
	while read -r path data; do
		[ -n "$path" ] || continue
		p=
		IFS=/ read -ra parts <<<"${path#/}"
		for part in "${parts[@]:0:${#parts[@]}-1}"; do
			p="$p/$part"
			case $seen in *" $p "*) continue ;; esac
			seen="$seen$p "
			printf "create %s ''\n" "$p"
		done
		printf "create %s '%s'\n" "$path" "$data"
	done | /usr/share/zookeeper/bin/zkCli.sh -server "$connect" \
		>"${TMP:-/tmp}/zk_nodes.out" 2>&1
}

# zk_hold PATH DATA [CONNECT]: create the ephemeral PATH (its parent must
# exist) from a background ZooKeeper CLI session that keeps it until the
# session ends (pid in HOLD_PID and PIDS; kill it to drop the node, which
# then lingers up to a session timeout).
zk_hold() {
	local path=$1 data=$2 connect=${3:-$ZK} fifo n=200
	fifo="$(mktemp -u "${TMP:-/tmp}/hold.XXXXXX")"
	mkfifo "$fifo"
	(exec /usr/bin/java -cp /etc/zookeeper/conf:/usr/share/java/zookeeper.jar \
		org.apache.zookeeper.ZooKeeperMain -server "$connect" \
		<"$fifo" >"$fifo.out" 2>&1) &
	HOLD_PID=$!
	PIDS+=("$HOLD_PID")
	# Keep the fifo open (the CLI exits at end of input) until teardown.
	exec {HOLD_FD}>"$fifo"
	printf "create -e %s '%s'\n" "$path" "$data" >&"$HOLD_FD"
	while ! grep -q "^Created $path\$" "$fifo.out" 2>/dev/null; do
		n=$((n - 1))
		[ "$n" -gt 0 ] && kill -0 "$HOLD_PID" 2>/dev/null || return 1
		sleep 0.1
	done
}

# drop_pages DIR: sync, then drop the files of DIR from the page cache,
# checking the first and last byte of each with a read that fails rather
# than wait; 1 if some stay cached after a few tries (pages under
# writeback, or a file system that keeps them).  The check reads with
# readahead off: readahead marks would start more reading from whoever
# touches those pages next (the broker's loop).
drop_pages() {
	python3 - "$1" <<-'PY'
	import os, sys, time
	d = sys.argv[1]
	def cached(fd, pos):
	    try:
	        os.preadv(fd, [bytearray(1)], pos, os.RWF_NOWAIT)
	        return True
	    except BlockingIOError:
	        return False
	for attempt in range(10):
	    os.sync()
	    warm = 0
	    for name in sorted(os.listdir(d)):
	        fd = os.open(os.path.join(d, name), os.O_RDONLY)
	        size = os.fstat(fd).st_size
	        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
	        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
	        if size > 0 and (cached(fd, 0) or cached(fd, size - 1)):
	            warm += 1
	        os.close(fd)
	    if warm == 0:
	        sys.exit(0)
	    time.sleep(0.2)
	sys.exit(1)
	PY
}

# start_broker [klog-serve options...]: start klog-serve on 127.0.0.1 with
# its data in $TMP/broker-data, log in $TMP/broker.log; sets BROKER_PID,
# BROKER_PORT and exports KLOG_BROKERS.  Called again (after the broker was
# killed) it restarts on the same port and data directory.
start_broker() {
	BROKER_PORT=${BROKER_PORT:-$(free_port)}
	BROKER_DATA=${BROKER_DATA:-$TMP/broker-data}
	export KLOG_BROKERS="127.0.0.1:$BROKER_PORT"
	klog-serve -d "$BROKER_DATA" -l "$KLOG_BROKERS" "$@" \
		2>>"$TMP/broker.log" &
	BROKER_PID=$!
	PIDS+=("$BROKER_PID")
	wait_port "$BROKER_PORT" 5 || {
		cat "$TMP/broker.log" >&2
		return 1
	}
}

# restart_zk [SECONDS]: stop the server of start_zk and start it again on
# the same port and dataDir after SECONDS (default 0) down; sessions and
# their ephemeral nodes survive a restart like this.
restart_zk() {
	kill -TERM "$ZK_PID" 2>/dev/null
	wait_gone "$ZK_PID" 10 || kill -KILL "$ZK_PID" 2>/dev/null
	wait_gone "$ZK_PID" 5
	sleep "${1:-0}"
	JMXDISABLE=true /usr/share/zookeeper/bin/zkServer.sh \
		start-foreground "$ZK_DIR/zoo.cfg" >>"$ZK_DIR/log" 2>&1 &
	ZK_PID=$!
	PIDS+=("$ZK_PID")
	wait_zk "$ZK_PORT" 30
}

# start_zk_broker ID [klog-serve options...]: a cluster-mode klog-serve with
# broker id ID, registered in ZooKeeper at $ZKC (default $ZK), on a port
# of its own (BROKER_PORTS[ID], kept for restarts), data in $TMP/broker-ID,
# log in $TMP/broker-ID.log; BROKER_PIDS[ID] is its pid.  Returns once the
# broker is registered.
declare -gA BROKER_PORTS BROKER_PIDS
start_zk_broker() {
	local id=$1 n=200
	shift
	BROKER_PORTS[$id]=${BROKER_PORTS[$id]:-$(free_port)}
	klog-serve -Z "${ZKC:-$ZK}" --broker-id "$id" \
		-l "127.0.0.1:${BROKER_PORTS[$id]}" -d "$TMP/broker-$id" "$@" \
		2>>"$TMP/broker-$id.log" &
	BROKER_PIDS[$id]=$!
	PIDS+=("$!")
	until klog-group -Z "${ZKC:-$ZK}" -H brokers 2>/dev/null |
	    grep -q "^$id	127.0.0.1	${BROKER_PORTS[$id]}\$"; do
		n=$((n - 1))
		if [ "$n" -eq 0 ] || ! kill -0 "${BROKER_PIDS[$id]}" 2>/dev/null
		then
			cat "$TMP/broker-$id.log" >&2
			return 1
		fi
		sleep 0.1
	done
}

# wait_log TEXT SECONDS: until the broker's log has TEXT.
wait_log() {
	local n=$(( $2 * 10 ))
	until grep -qF "$1" "$TMP/broker.log"; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.1
	done
}
