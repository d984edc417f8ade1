#!/usr/bin/env bats
# The names the completions offer besides flags: topics from a standalone
# broker or from ZooKeeper (-b or -Z on the line, else the environment, as
# the tools take them), groups from ZooKeeper, topics of a data directory,
# in bash and, where it is installed, zsh; and nothing, quickly, when the
# broker or ZooKeeper is not there.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	common_setup
	unset KLOG_BROKERS KLOG_ZOOKEEPER KLOG_DATA_DIR
}

teardown() {
	common_teardown
}

# complete_bash FUNCTION WORD...: what the bash function offers for the
# last word of the line.
complete_bash() {
	local fn=$1
	shift
	bash -c 'source "$1/completions/klog.bash"; fn=$2; shift 2
		COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); "$fn"
		echo "${COMPREPLY[*]}"' _ "$KLOG_ROOT" "$fn" "$@"
}

@test "completions: topics of a standalone broker, from -b or KLOG_BROKERS" {
	start_broker
	echo x | klog-produce -t alpha
	echo x | klog-produce -t beta
	local b=$KLOG_BROKERS
	unset KLOG_BROKERS
	run -0 complete_bash _klog_consume klog-consume -b "$b" -t ""
	[ "$output" = "alpha beta" ]
	run -0 complete_bash _klog_produce klog-produce -b "$b" -t al
	[ "$output" = "alpha" ]
	KLOG_BROKERS=$b run -0 complete_bash _klog_consume klog-consume -t b
	[ "$output" = "beta" ]
	# A dead broker: nothing, within the timeout.
	run -0 complete_bash _klog_consume klog-consume -b "127.0.0.1:$(free_port)" -t ""
	[ "$output" = "" ]
}

@test "completions: topics and groups from ZooKeeper, from -Z or KLOG_ZOOKEEPER" {
	start_zk
	start_zk_broker 1
	seq 10 | klog-produce -Z "$ZK" -t clicks
	seq 10 | klog-produce -Z "$ZK" -t cloud
	klog-consume -Z "$ZK" -G stats -t clicks -o beginning -e >/dev/null
	klog-consume -Z "$ZK" -G status -t cloud -o beginning -e >/dev/null

	run -0 complete_bash _klog_consume klog-consume -Z "$ZK" -t cl
	[ "$output" = "clicks cloud" ]
	run -0 complete_bash _klog_consume klog-consume -Z "$ZK" -G ""
	[ "$output" = "stats status" ]
	run -0 complete_bash _klog_produce klog-produce -Z "$ZK" -t clo
	[ "$output" = "cloud" ]
	run -0 complete_bash _klog_group klog-group -Z "$ZK" describe -g stat
	[ "$output" = "stats status" ]
	run -0 complete_bash _klog_group klog-group -Z "$ZK" topics -t ""
	[ "$output" = "clicks cloud" ]
	KLOG_ZOOKEEPER=$ZK run -0 complete_bash _klog_group klog-group reset -g sta
	[ "$output" = "stats status" ]
	# No ZooKeeper named: nothing, and nothing asked.
	run -0 complete_bash _klog_group klog-group describe -g ""
	[ "$output" = "" ]

	command -v zsh >/dev/null || skip "no zsh"
	# zsh: the same helpers, with _arguments' opt_args as it would fill it.
	run -0 zsh -f -c 'source "$1/completions/_klog"
		_describe() { local -a a; a=( ${(P)4} ); print -r -- "${(j: :)a}" }
		typeset -A opt_args
		opt_args=(-Z "$2")
		_klog_broker_topics
		_klog_zk_names groups group list
		_klog_zk_names topics topic topics
		opt_args=()
		KLOG_ZOOKEEPER=$2 _klog_zk_names groups group list' _ "$KLOG_ROOT" "$ZK"
	[ "${lines[0]}" = "clicks cloud" ]
	[ "${lines[1]}" = "stats status" ]
	[ "${lines[2]}" = "clicks cloud" ]
	[ "${lines[3]}" = "stats status" ]
	stop_zk
}

@test "completions: topics of a data directory for klog-retain, in bash and zsh" {
	mkdir -p "$TMP/d/app-logs-0" "$TMP/d/app-logs-1" "$TMP/d/x-2" \
		"$TMP/d/not-a-partition" "$TMP/klog-data/here-0"
	touch "$TMP/d/file-3"
	cd "$TMP"
	run -0 complete_bash _klog_retain klog-retain -d "$TMP/d" -t ""
	[ "$output" = "app-logs x" ]
	run -0 complete_bash _klog_retain klog-retain -t ""
	[ "$output" = "here" ]
	command -v zsh >/dev/null || skip "no zsh"
	run -0 zsh -f -c 'source "$1/completions/_klog"
		_describe() { local -a a; a=( ${(P)4} ); print -r -- "${(j: :)a}" }
		typeset -A opt_args
		opt_args=(-d "$2")
		_klog_data_topics
		opt_args=()
		_klog_data_topics' _ "$KLOG_ROOT" "$TMP/d"
	[ "${lines[0]}" = "app-logs x" ]
	[ "${lines[1]}" = "here" ]
}

@test "completions: the zsh file parses, and klog-group's commands have descriptions" {
	command -v zsh >/dev/null || skip "no zsh"
	run -0 zsh -n "$KLOG_ROOT/completions/_klog"
	run -0 grep -c 'describe\\:"' "$KLOG_ROOT/completions/_klog"
	run -0 bash -n "$KLOG_ROOT/completions/klog.bash"
}
