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
