# Network namespaces for tests/soak/partitions.sh: one namespace per node
# (ZooKeeper, three brokers, the clients), each with a veth "eth0" whose
# other end, v-NODE, is a port of the bridge br0 in a hub namespace of its
# own; nothing is added to the root namespace.  Addresses 10.27.0.0/24:
# zk .1, brokers b1 .11, b2 .12, b3 .13, clients cl .100.
#
# Cuts are silent and selective.  Every hub port has an HTB root qdisc
# whose class 1:2 ends in a pfifo of limit 0, which drops whatever is put
# in it; a cut of A from B is a u32 filter on v-B's egress classifying
# packets from A's address into 1:2, and one on v-A's for packets from B.
# So the packets are dropped on the wire, between the two hosts: neither
# kernel sees an error, no RST or ICMP comes back, a connect just hangs
# and a connection stalls, as in a real partition.  (A blackhole or
# prohibit route inside a namespace would fail the sender's own connect
# at once, EINVAL or EACCES, and "ip link set down" cuts everyone, the
# clients too.)  Each cut filter's priority is the source's last octet,
# so one pair heals without touching the others.  ARP is not IP and
# passes: a cut host's neighbours stay resolved, as they would on a
# switch that drops only some flows.
#
# The lossy link of scenario (f) replaces a broker's bridge port: v-NODE
# leaves br0 and tests/soak/link.py forwards frames between it and x-NODE,
# whose peer xb-NODE is a port of br0 (see link.py for why user space).
#
# Needs: NS_PREFIX (unique per run, e.g. klogp$$), NS_DIR (a directory
# for the list of namespaces made, so that ns_down finds them all).

NS_NET=10.27.0
NS_NODES=(zk b1 b2 b3 cl)
declare -gA NS_ADDR=([zk]=$NS_NET.1 [b1]=$NS_NET.11 [b2]=$NS_NET.12
	[b3]=$NS_NET.13 [cl]=$NS_NET.100)
NS_PY=/usr/bin/python3
NS_LINKPY="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/link.py"
declare -gA NS_LINK_PID

ns_name() { printf '%s-%s' "$NS_PREFIX" "$1"; }

# ns_exec NODE CMD...: run CMD in NODE's namespace (ip netns exec execs,
# so a background ns_exec's $! is CMD's own pid).
ns_exec() {
	local n=$1
	shift
	ip netns exec "$(ns_name "$n")" "$@"
}

ns_hub() { ip netns exec "$(ns_name hub)" "$@"; }

# ns_add NAME: create namespace NAME, listed for ns_down first.
ns_add() {
	echo "$1" >>"$NS_DIR/netns.list"
	ip netns add "$1"
}

# ns_up: the hub, its bridge and every node, links up, cut classes ready.
ns_up() {
	local n v
	: >>"$NS_DIR/netns.list"
	ns_add "$(ns_name hub)" || return 1
	ns_hub ip link set lo up &&
	ns_hub ip link add br0 type bridge &&
	ns_hub ip link set br0 up || return 1
	for n in "${NS_NODES[@]}"; do
		v=v-$n
		ns_add "$(ns_name "$n")" || return 1
		ip link add eth0 netns "$(ns_name "$n")" type veth \
			peer name "$v" netns "$(ns_name hub)" || return 1
		ns_exec "$n" ip link set lo up &&
		ns_exec "$n" ip addr add "${NS_ADDR[$n]}/24" dev eth0 &&
		ns_exec "$n" ip link set eth0 up &&
		ns_exec "$n" "$NS_PY" "$NS_LINKPY" offload-off eth0 &&
		ns_hub ip link set "$v" master br0 up &&
		ns_hub "$NS_PY" "$NS_LINKPY" offload-off "$v" || return 1
		ns_hub tc qdisc add dev "$v" root handle 1: htb &&
		ns_hub tc class add dev "$v" parent 1: classid 1:2 htb \
			rate 1mbit &&
		ns_hub tc qdisc add dev "$v" parent 1:2 handle 2: pfifo \
			limit 0 || return 1
		case $n in
		b*)	# the spare port for the lossy link
			ns_hub ip link add "x-$n" type veth peer name "xb-$n" &&
			ns_hub ip link set "xb-$n" master br0 up &&
			ns_hub ip link set "x-$n" up &&
			ns_hub "$NS_PY" "$NS_LINKPY" offload-off "x-$n" "xb-$n" ||
				return 1 ;;
		esac
	done
}

# ns_down: stop the links, delete every namespace ns_up made (their veths
# go with them).  Call once the processes in them are gone.
ns_down() {
	local n pid
	for n in "${!NS_LINK_PID[@]}"; do
		pid=${NS_LINK_PID[$n]}
		kill -TERM "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	NS_LINK_PID=()
	[ -f "$NS_DIR/netns.list" ] || return 0
	while read -r n; do
		[ -n "$n" ] && ip netns del "$n" 2>/dev/null
	done <"$NS_DIR/netns.list"
	rm -f "$NS_DIR/netns.list"
}

# ns_left: the namespaces of this prefix still there (should be none).
ns_left() {
	ip netns list | awk -v p="$NS_PREFIX-" 'index($1, p) == 1 { print $1 }'
}

# ns_sweep PREFIX: delete the namespaces PREFIX<pid>-* of earlier runs
# whose script (pid) is gone and in which no process is left (a run
# killed -9 has no trap to clean up after it).  Says what it deleted.
ns_sweep() {
	local n pid
	for n in $(ip netns list | awk -v p="$1" 'index($1, p) == 1 { print $1 }'); do
		pid=${n#"$1"}
		pid=${pid%%-*}
		case $pid in ''|*[!0-9]*) continue ;; esac
		kill -0 "$pid" 2>/dev/null && continue
		[ -z "$(ip netns pids "$n" 2>/dev/null)" ] || continue
		ip netns del "$n" && echo "$n"
	done
}

# ns_octet NODE: the last byte of its address, the cut filters' priority.
ns_octet() { printf '%s' "${NS_ADDR[$1]##*.}"; }

# ns_drop_from DST SRC: drop packets from SRC on their way into DST.
ns_drop_from() {
	ns_hub tc filter replace dev "v-$1" parent 1: protocol ip \
		prio "$(ns_octet "$2")" u32 match ip src "${NS_ADDR[$2]}/32" \
		flowid 1:2
}

# ns_cut A B...: cut A from each B, both ways.
ns_cut() {
	local a=$1 b
	shift
	for b in "$@"; do
		ns_drop_from "$a" "$b" && ns_drop_from "$b" "$a" || return 1
	done
}

# ns_heal A B...: undo ns_cut A B...
ns_heal() {
	local a=$1 b
	shift
	for b in "$@"; do
		ns_hub tc filter del dev "v-$b" parent 1: prio "$(ns_octet "$a")" \
			2>/dev/null
		ns_hub tc filter del dev "v-$a" parent 1: prio "$(ns_octet "$b")" \
			2>/dev/null
	done
	return 0
}

# ns_heal_all: no cut filter left on any port.
ns_heal_all() {
	local n
	for n in "${NS_NODES[@]}"; do
		ns_hub tc filter del dev "v-$n" parent 1: 2>/dev/null
	done
	return 0
}

# ns_cuts: the cut filters in place, one "DST<-SRC" a line.
ns_cuts() {
	local n m pref
	for n in "${NS_NODES[@]}"; do
		for pref in $(ns_hub tc filter show dev "v-$n" parent 1: \
		    2>/dev/null | awk '/ fh [0-9a-f]+::[0-9a-f]+ / { print $5 }' |
		    sort -u); do
			for m in "${NS_NODES[@]}"; do
				[ "$(ns_octet "$m")" = "$pref" ] && echo "$n<-$m"
			done
		done
	done
}

# ns_dropped NODE: packets the cut class of NODE's port has dropped.
ns_dropped() {
	ns_hub tc -s qdisc show dev "v-$1" |
		awk '/^qdisc pfifo 2:/ { f = 1 } f && /dropped/ {
			sub(/.*dropped /, ""); sub(/,.*/, ""); print; exit }'
}

# ns_probe FROM TO PORT [TIMEOUT]: one TCP connect from FROM's namespace:
# "connected", "timeout", "refused" or "unreachable(...)" and seconds.
ns_probe() {
	ns_exec "$1" "$NS_PY" "$NS_LINKPY" probe "${NS_ADDR[$2]}" "$3" \
		"${4:-0.8}"
}

# ns_rtt FROM TO PORT: median TCP connect time over 9 tries, seconds.
ns_rtt() {
	ns_exec "$1" "$NS_PY" "$NS_LINKPY" rtt "${NS_ADDR[$2]}" "$3" 9
}

# ns_link_on NODE LOSS DELAY_MS DIR STATS: NODE's traffic through link.py;
# DIR "out" (what NODE sends, as netem on NODE's eth0 would) or "both".
ns_link_on() {
	local n=$1 loss=$2 delay=$3 dir=$4 stats=$5 ready lin=0 din=0 i
	ready="$NS_DIR/link-$n.ready"
	rm -f "$ready"
	[ "$dir" = both ] && { lin=$loss; din=$delay; }
	ns_hub ip link set "v-$n" promisc on
	ns_hub ip link set "x-$n" promisc on
	# v-$n carries what NODE sends (a to b), x-$n what it receives.
	# Not ns_hub in the background: a function would be a subshell
	# between this shell and the pid to kill.
	ip netns exec "$(ns_name hub)" "$NS_PY" "$NS_LINKPY" run \
		"v-$n" "x-$n" --loss-ab "$loss" \
		--delay-ab "$delay" --loss-ba "$lin" --delay-ba "$din" \
		--stats "$stats" --ready "$ready" --seed "${SOAK_SEED:-$RANDOM}" &
	NS_LINK_PID[$n]=$!
	for ((i = 0; i < 50; i++)); do
		[ -s "$ready" ] && break
		sleep 0.1
	done
	[ -s "$ready" ] || return 1
	ns_hub ip link set "v-$n" nomaster
}

# ns_link_off NODE: NODE's port back in the bridge, the link stopped.
ns_link_off() {
	local n=$1 pid=${NS_LINK_PID[$1]:-}
	ns_hub ip link set "v-$n" master br0 || return 1
	[ -n "$pid" ] || return 0
	kill -TERM "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	unset "NS_LINK_PID[$n]"
	return 0
}
