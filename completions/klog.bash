# bash completion for the klog tools.
#
# One file serves every tool: `make install` copies it under each tool's
# name, so bash-completion loads it for whichever klog command is completed
# first, and it then registers all of them.
#
# Layout: shared helpers, then one function _klog_<tool> per tool in its own
# block between "# --- klog-<tool> ---" and "# --- end klog-<tool> ---",
# then the `complete` lines, one per tool, at the very end.  To add a tool,
# add its block above the `complete` lines and its own `complete -F` line.

# Complete file names: bash-completion's _filedir when it is loaded, plain
# compgen otherwise.
_klog_files()
{
	if declare -F _filedir >/dev/null; then
		_filedir
	else
		compopt -o filenames 2>/dev/null
		COMPREPLY=( $(compgen -f -- "$1") )
	fi
}

# -X's librdkafka security properties (klog-security(7)): a key and its
# '=', or a key's values once the '=' is typed.
_klog_property()
{
	local cur=$1

	compopt -o nospace 2>/dev/null
	case $cur in
	security.protocol=*)
		COMPREPLY=( $(compgen -P security.protocol= -W "plaintext ssl
			sasl_plaintext sasl_ssl" -- "${cur#*=}") )
		;;
	sasl.mechanism=*|sasl.mechanisms=*)
		COMPREPLY=( $(compgen -P "${cur%%=*}=" -W "PLAIN SCRAM-SHA-256
			SCRAM-SHA-512" -- "${cur#*=}") )
		;;
	ssl.endpoint.identification.algorithm=*)
		COMPREPLY=( $(compgen -P "${cur%%=*}=" -W "https none" \
			-- "${cur#*=}") )
		;;
	*=*)
		;;
	*)
		COMPREPLY=( $(compgen -W "security.protocol= ssl.ca.location=
			ssl.certificate.location= ssl.key.location=
			ssl.endpoint.identification.algorithm= sasl.mechanism=
			sasl.username= sasl.password=" -- "$cur") )
		;;
	esac
}

# --- klog-dump ---
_klog_dump()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local opts='-b --base -h --help -J --json -n --count -o --offset
		-P --preview -q --quiet -s --summary -v --verbose --verify
		--deep --allow-partial --salvage --progress --version'

	COMPREPLY=()
	case $prev in
	-b|--base|-n|--count|-o|--offset|-P|--preview)
		return 0	# a number
		;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
		return 0
	fi
	# Segment files (*.klog, *.kafka, or any file) and partition
	# directories.
	_klog_files "$cur"
}
# --- end klog-dump ---

# --- klog-group ---
# The first column of `klog-group -H ARGS...` (group names, topics) from the
# ZooKeeper named by -Z on the line, else $KLOG_ZOOKEEPER, under a short
# timeout so that a dead ensemble never hangs the shell.
_klog_zk_names()
{
	local z=${KLOG_ZOOKEEPER:-} i w

	for (( i = 1; i < COMP_CWORD; i++ )); do
		w=${COMP_WORDS[i]}
		[[ $w == -Z || $w == --zookeeper ]] && z=${COMP_WORDS[i+1]}
	done
	[[ -n $z ]] || return 0
	timeout 2 klog-group -Z "$z" -T 1 -H "$@" 2>/dev/null | cut -f1 |
		sort -u
}

_klog_group()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local cmds='list describe reset delete topics brokers create-topic
		alter-topic delete-topic users acls'
	local opts='-b --broker -f --force -g --group -H --no-header -h --help -J --json
		--iterations --mechanism --min-insync-replicas -n --dry-run
		--execute --partitions --password-file --replication-factor
		-T --timeout -t --topic --to-earliest --to-latest --to-offset
		--to-time --users --version -Z --zookeeper --zk-auth-file
		-X --property -F --property-file
		--acls --allow-principal --deny-principal --operation --cluster
		--prefixed --allow-host --deny-host'
	local w acls=

	COMPREPLY=()
	case $prev in
	-g|--group)
		COMPREPLY=( $(compgen -W "$(_klog_zk_names list)" -- "$cur") )
		return 0
		;;
	-t|--topic)
		COMPREPLY=( $(compgen -W "$(_klog_zk_names topics)" -- "$cur") )
		return 0
		;;
	-T|--timeout|--to-offset|--to-time|--partitions|--replication-factor|\
	--min-insync-replicas|--iterations)
		return 0	# a duration, a number or a time
		;;
	--users|--password-file|--zk-auth-file|-F|--property-file)
		_klog_files "$cur"
		return 0
		;;
	-X|--property)
		_klog_property "$cur"
		return 0
		;;
	--mechanism)
		COMPREPLY=( $(compgen -W "SCRAM-SHA-256 SCRAM-SHA-512 all" \
			-- "$cur") )
		return 0
		;;
	users)
		COMPREPLY=( $(compgen -W "add remove list" -- "$cur") )
		return 0
		;;
	-Z|--zookeeper)
		COMPREPLY=( $(compgen -W "localhost:2181" -- "$cur") )
		return 0
		;;
	-b|--broker)
		COMPREPLY=( $(compgen -W "localhost:9092" -- "$cur") )
		return 0
		;;
	--acls)
		compopt -o filenames 2>/dev/null
		COMPREPLY=( $(compgen -f -- "$cur") )
		return 0
		;;
	--operation)
		COMPREPLY=( $(compgen -W "Read Write Create Delete Alter
			Describe ClusterAction DescribeConfigs All" -- "$cur") )
		return 0
		;;
	--allow-principal|--deny-principal)
		compopt -o nospace 2>/dev/null
		COMPREPLY=( $(compgen -W "User:" -- "$cur") )
		return 0
		;;
	--allow-host|--deny-host)
		return 0	# an IP address
		;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
		return 0
	fi
	for w in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
		if [[ -n $acls ]]; then	# acls takes one word more
			[[ $w == add || $w == remove || $w == list ]] && return 0
			continue
		fi
		[[ $w == acls ]] && { acls=1; continue; }
		[[ " $cmds " == *" $w "* ]] && return 0	# one command only
	done
	if [[ -n $acls ]]; then
		COMPREPLY=( $(compgen -W "add remove list" -- "$cur") )
		return 0
	fi
	COMPREPLY=( $(compgen -W "$cmds" -- "$cur") )
}
# --- end klog-group ---

# --- klog-retain ---
_klog_retain()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local opts='-d --data-dir -h --help --max-age --max-bytes -n --dry-run
		-q --quiet -t --topic -v --verbose -w --wait --version'
	local dir w i

	COMPREPLY=()
	case $prev in
	-d|--data-dir)
		compopt -o filenames 2>/dev/null
		COMPREPLY=( $(compgen -d -- "$cur") )
		return 0
		;;
	--max-age|-w|--wait)
		COMPREPLY=( $(compgen -W "90m 36h 7d" -- "$cur") )
		return 0
		;;
	--max-bytes)
		COMPREPLY=( $(compgen -W "500M 10G" -- "$cur") )
		return 0
		;;
	-t|--topic)
		# The topics of the data directory named so far (or the
		# default), from its <topic>-<n> directories.
		dir=${KLOG_DATA_DIR:-klog-data}
		for (( i = 1; i < COMP_CWORD - 1; i++ )); do
			w=${COMP_WORDS[i]}
			[[ $w == -d || $w == --data-dir ]] &&
				dir=${COMP_WORDS[i+1]}
		done
		COMPREPLY=( $(compgen -W "$(cd -- "$dir" 2>/dev/null &&
			for w in *-[0-9]*; do [[ -d $w && ! -L $w ]] &&
				echo "${w%-*}"; done | sort -u)" -- "$cur") )
		return 0
		;;
	esac
	COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
}
# --- end klog-retain ---

# --- klog-produce / klog-consume ---
# Topics from the brokers or the ZooKeeper named by -b or -Z on the line
# (else those of $KLOG_BROKERS or $KLOG_ZOOKEEPER, as the tool would take
# them), asked with klog-consume -L under a short timeout so a dead broker
# never hangs.
_klog_broker_topics()
{
	local where=() i w

	for (( i = 1; i < COMP_CWORD; i++ )); do
		w=${COMP_WORDS[i]}
		[[ $w == -b || $w == --broker || $w == -Z ||
		    $w == --zookeeper ]] && where=("$w" "${COMP_WORDS[i+1]}")
	done
	timeout 2 klog-consume -L -m 1s "${where[@]}" 2>/dev/null | cut -f1 |
		sort -u
}

_klog_produce()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local opts='-0 --null -a --acks -b --broker --batch -D --delimiter
		-H --header -h --help -J --json -K --key-delimiter --linger -m --timeout
		--max-message -p --partition -q --quiet --retry-for --idempotent
		--stop-on-oversize --strip-key --source-offset-file --progress --report
		-t --topic --timestamp -v --verbose --version -z --compression
		-Z --zookeeper --zk-session-timeout --zk-auth-file -X --property
		-F --property-file'

	COMPREPLY=()
	case $prev in
	-a|--acks)
		COMPREPLY=( $(compgen -W "0 1 all" -- "$cur") )
		return 0
		;;
	-z|--compression)
		COMPREPLY=( $(compgen -W "gzip snappy lz4 zstd none" -- "$cur") )
		return 0
		;;
	-t|--topic)
		COMPREPLY=( $(compgen -W "$(_klog_broker_topics)" -- "$cur") )
		return 0
		;;
	--source-offset-file|--report|--zk-auth-file|-F|--property-file)
		_klog_files "$cur"
		return 0
		;;
	-X|--property)
		_klog_property "$cur"
		return 0
		;;
	-b|--broker|--batch|-D|--delimiter|-K|--key-delimiter|--linger|\
	-m|--timeout|--max-message|-p|--partition|--retry-for|\
	-Z|--zookeeper|--zk-session-timeout)
		return 0	# an address, a number, a delimiter or a time
		;;
	esac
	COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
}

_klog_consume()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local opts='-b --broker -c --count -D --delimiter -e --exit
		--fetch-size -f --format -h --help -J --json -L --list
		-m --timeout -o --offset --offset-file --offsets-from
		-p --partition -q --quiet
		--reset --retry-for --skip-corrupt --progress -t --topic -u --unbuffered -v --verbose
		--version -Z --zookeeper -G --group --commit-interval
		--zk-session-timeout --zk-auth-file -X --property -F --property-file'

	COMPREPLY=()
	case $prev in
	-o|--offset)
		COMPREPLY=( $(compgen -W "beginning end s@" -- "$cur") )
		return 0
		;;
	--reset)
		COMPREPLY=( $(compgen -W "earliest latest fail" -- "$cur") )
		return 0
		;;
	-f|--format)
		COMPREPLY=( $(compgen -W "'%s\\n' '%p\\t%o\\t%s\\n'" -- "$cur") )
		return 0
		;;
	-t|--topic)
		COMPREPLY=( $(compgen -W "$(_klog_broker_topics)" -- "$cur") )
		return 0
		;;
	--offset-file|--offsets-from|--zk-auth-file|-F|--property-file)
		_klog_files "$cur"
		return 0
		;;
	-X|--property)
		_klog_property "$cur"
		return 0
		;;
	-G|--group)
		COMPREPLY=( $(compgen -W "$(_klog_zk_names list)" -- "$cur") )
		return 0
		;;
	-b|--broker|-c|--count|-D|--delimiter|--fetch-size|-m|--timeout|\
	-p|--partition|--retry-for|-Z|--zookeeper|\
	--commit-interval|--zk-session-timeout)
		return 0	# an address, a number, a delimiter or a time
		;;
	esac
	COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
}
# --- end klog-produce / klog-consume ---

# --- klog-serve ---
_klog_serve()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local opts='--acls --advertise --allow-everyone-if-no-acl-found
		--broker-id -c --config --cleanup-interval
		--cold-read-rate --crc-threads -d --data-dir --flush-messages --flush-ms -h --help
		--kafka-advertise --kafka-listen -l --listen
		--log-message-timestamp-type --max-connections --max-connections-per-address --max-pending-bytes
		--idle-timeout --request-timeout --max-message-bytes --max-open-segments
		--max-request-bytes --metrics-listen --no-auto-create --partitions -q --quiet
		--replica-lag-time --replica-principal
		--retention-bytes --retention-hours --sasl-mechanisms --segment-bytes
		--ssl-ca --ssl-cert --ssl-client-auth --ssl-key --super-users --topic
		--unclean-leader-election --users
		-v --verbose --version
		-Z --zookeeper --zk-acls --zk-auth-file --zk-connect-timeout --zk-session-timeout'

	COMPREPLY=()
	case $prev in
	-d|--data-dir)
		compopt -o filenames 2>/dev/null
		COMPREPLY=( $(compgen -d -- "$cur") )
		return 0
		;;
	-c|--config|--ssl-ca|--ssl-cert|--ssl-key|--users|--zk-auth-file|--acls)
		_klog_files "$cur"
		return 0
		;;
	--sasl-mechanisms)
		COMPREPLY=( $(compgen -W "SCRAM-SHA-256,SCRAM-SHA-512 PLAIN,SCRAM-SHA-256,SCRAM-SHA-512 SCRAM-SHA-512" -- "$cur") )
		return 0
		;;
	--ssl-client-auth)
		COMPREPLY=( $(compgen -W "none requested required" -- "$cur") )
		return 0
		;;
	--log-message-timestamp-type)
		COMPREPLY=( $(compgen -W "CreateTime LogAppendTime" -- "$cur") )
		return 0
		;;
	-l|--listen)
		COMPREPLY=( $(compgen -W "127.0.0.1:9092 0.0.0.0:9092" \
			-- "$cur") )
		return 0
		;;
	--kafka-listen)
		COMPREPLY=( $(compgen -W "127.0.0.1:9093 0.0.0.0:9093" \
			-- "$cur") )
		return 0
		;;
	--metrics-listen)
		COMPREPLY=( $(compgen -W "127.0.0.1:9644 0.0.0.0:9644" \
			-- "$cur") )
		return 0
		;;
	--retention-hours)
		COMPREPLY=( $(compgen -W "168 24 7d off" -- "$cur") )
		return 0
		;;
	--retention-bytes)
		COMPREPLY=( $(compgen -W "1G 10G off" -- "$cur") )
		return 0
		;;
	--cold-read-rate)
		COMPREPLY=( $(compgen -W "32M 128M off" -- "$cur") )
		return 0
		;;
	--crc-threads)
		COMPREPLY=( $(compgen -W "auto 0 1 2 3" -- "$cur") )
		return 0
		;;
	--segment-bytes|--max-request-bytes|--max-message-bytes)
		COMPREPLY=( $(compgen -W "1M 100M 1G" -- "$cur") )
		return 0
		;;
	--flush-ms|--cleanup-interval)
		COMPREPLY=( $(compgen -W "0 100ms 1s 5m" -- "$cur") )
		return 0
		;;
	--zk-session-timeout)
		COMPREPLY=( $(compgen -W "2000 6000 10s" -- "$cur") )
		return 0
		;;
	--advertise|--kafka-advertise|--broker-id|--flush-messages|--max-connections|\
	--max-connections-per-address|--max-pending-bytes|--idle-timeout|--request-timeout|\
	--max-open-segments|--partitions|--topic|-Z|--zookeeper|--zk-connect-timeout)
		return 0	# an address, a number or NAME:N
		;;
	esac
	COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
}
# --- end klog-serve ---

complete -F _klog_dump klog-dump
complete -F _klog_group klog-group
complete -F _klog_retain klog-retain
complete -F _klog_produce klog-produce
complete -F _klog_consume klog-consume
complete -F _klog_serve klog-serve
