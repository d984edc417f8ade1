#!/usr/bin/env bats
# klog-produce(1) and klog-consume(1) hold: the pages lint, every example
# runs against a broker (paths outside the test moved into it), and every
# flag of -h is in the page and in both completions, and nothing more.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	common_setup
}

teardown() {
	common_teardown
}

# The commands of a page's EXAMPLES: "$ " lines with their indented
# continuation lines, roff's \e turned back into a backslash.
examples() {
	awk '/^\.Sh EXAMPLES/ { on = 1; next }
	    /^\.Sh / { on = 0 }
	    !on { next }
	    /^\$ / { if (cmd != "") print cmd; cmd = substr($0, 3); next }
	    /^    / && cmd != "" { sub(/^ +/, " "); cmd = cmd $0; next }
	    { if (cmd != "") print cmd; cmd = "" }
	    END { if (cmd != "") print cmd }' "$1" | sed 's/\\e/\\/g'
}

help_flags() {
	"$1" -h | grep -E '^ +-' | sed -E 's/^ +//; s/   .*//' |
	    grep -oE -- '-{1,2}[A-Za-z0-9][A-Za-z-]*' | sort -u
}

man_flags() {
	grep '^\.It Fl ' "$KLOG_ROOT/man/$1.1" | sed 's/^\.It Fl //; s/ , / /g' |
	    awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^-/) print "-" $i;
	        else if (i == 1) print "-" $i }' | sort -u
}

# The option words of a tool's function in a completion file.
bash_flags() {
	sed -n "/^_klog_$1()\$/,/^}\$/p" "$KLOG_ROOT/completions/klog.bash" |
	    sed -n "/local opts='/,/'\$/p" |
	    grep -oE -- '-{1,2}[A-Za-z0-9][A-Za-z-]*' | sort -u
}

zsh_flags() {
	sed -n "/^_klog_$1() {\$/,/^}\$/p" "$KLOG_ROOT/completions/_klog" |
	    grep -v '_arguments' | grep -oE -- "[{,()'\" ]-{1,2}[A-Za-z0-9][A-Za-z-]*" |
	    sed -E 's/^.//' | sort -u
}

check_flags() {
	local tool=$1 f
	help_flags "$tool" >"$TMP/help"
	man_flags "$tool" >"$TMP/man"
	bash_flags "${tool#klog-}" >"$TMP/bash"
	zsh_flags "${tool#klog-}" >"$TMP/zsh"
	[ "$(wc -l <"$TMP/help")" -ge 30 ]
	for f in $(cat "$TMP/help"); do
		grep -qxF -- "$f" "$TMP/man" || { echo "$tool: $f not in the man page"; false; }
		grep -qxF -- "$f" "$TMP/bash" || { echo "$tool: $f not in klog.bash"; false; }
		grep -qxF -- "$f" "$TMP/zsh" || { echo "$tool: $f not in _klog"; false; }
	done
	for f in $(cat "$TMP/man" "$TMP/bash" "$TMP/zsh"); do
		grep -qxF -- "$f" "$TMP/help" || { echo "$tool: unknown flag $f"; false; }
	done
}

@test "docs: both man pages pass mandoc -Tlint" {
	command -v mandoc >/dev/null || skip "no mandoc"
	run -0 mandoc -Tlint -Wwarning "$KLOG_ROOT/man/klog-produce.1" \
		"$KLOG_ROOT/man/klog-consume.1"
	[ -z "$output" ]
}

@test "docs: every flag of klog-produce -h is in its page and completions, and no other" {
	check_flags klog-produce
}

@test "docs: every flag of klog-consume -h is in its page and completions, and no other" {
	check_flags klog-consume
}

# nginx's combined log format: the status is field 9.
access_line() {
	printf '10.0.0.%d - - [29/Nov/2026:10:00:%02d +0000] "GET /p%d HTTP/1.1" %d 612 "-" "curl/8"\n' \
		"$1" "$(( $1 % 60 ))" "$1" "$2"
}

@test "docs: every example of klog-produce(1) and klog-consume(1) runs" {
	local cmd n=0 pid off
	start_broker
	export HOME="$TMP"
	for i in $(seq 1 30); do
		access_line "$i" $(( i % 7 == 0 ? 500 : 200 ))
	done >"$TMP/access.log"

	# Files the examples make (the mirror's bookmark) go in $TMP.
	cd "$TMP"
	while IFS= read -r cmd; do
		# The TLS example speaks to a host of its own, with its files.
		case $cmd in *broker1:*|*client.properties*) continue ;; esac
		n=$((n + 1))
		cmd=${cmd//tail -F \/var\/log\/nginx\/access.log/cat $TMP/access.log}
		cmd=${cmd//find \/etc/find $KLOG_ROOT/man}
		# The mirror: from the test's broker to itself, into a topic
		# of its own, and to the end rather than for ever.
		cmd=${cmd//-b src:9092/-b $KLOG_BROKERS -e}
		cmd=${cmd//-b dst:9092 -t nginx/-b $KLOG_BROKERS -t nginx-mirror}
		run -0 bash -c "$cmd" || { echo "failed: $cmd"; false; }
	done < <(examples "$KLOG_ROOT/man/klog-produce.1")
	[ "$n" -eq 9 ]
	[ "$(klog-consume -t nginx-copy -o beginning -e | wc -l)" -eq 30 ]
	# Keys, a header and timestamps, as the page shows them read back.
	[ "$(klog-consume -t actions -o beginning -e -f '%k %h %s\n')" = \
	    "alice app=web login
bob app=web login" ]
	[ "$(klog-consume -t actions -o beginning -e -f '%T\n' | sort -u |
	    wc -l)" -eq 1 ]
	# The mirror copied every line, and its bookmark says how far.
	[ "$(klog-consume -t nginx-mirror -o beginning -e | wc -l)" -eq 30 ]
	[ -s nginx.mirror ]
	[ "$(klog-consume -t numbers -o beginning -e | tail -n 1)" = 1000000 ]

	# Less the TLS examples, which speak to a host of their own.
	examples "$KLOG_ROOT/man/klog-consume.1" | grep -v 'broker1:' >"$TMP/ex"
	[ "$(wc -l <"$TMP/ex")" -eq 8 ]
	# 1: status counts.
	run -0 bash -c "$(sed -n 1p "$TMP/ex")"
	[[ "$output" == *" 4 500"* ]]
	[[ "$output" == *" 26 200"* ]]
	# 2: a follower printing the offsets of new 500s; it runs until killed.
	# Into a file, jq needs --unbuffered to show them before it ends.
	cmd=$(sed -n 2p "$TMP/ex")
	setsid bash -c "${cmd//jq -r/jq --unbuffered -r}" >"$TMP/offsets" &
	pid=$!
	PIDS+=("$pid")
	sleep 1
	{ access_line 31 200; access_line 32 500; } | klog-produce -t nginx
	for i in $(seq 33 45); do access_line "$i" 200; done |
		klog-produce -t nginx
	n=100
	until [ -s "$TMP/offsets" ] || [ "$n" -eq 0 ]; do
		sleep 0.1
		n=$((n - 1))
	done
	kill -TERM -- "-$pid"
	off=$(cat "$TMP/offsets")
	[ -n "$off" ]
	# 3: rewind to that offset (the page's 1234567) and replay ten.
	cmd=$(sed -n 3p "$TMP/ex")
	run -0 bash -c "${cmd//1234567/$off}"
	[ "${#lines[@]}" -eq 10 ]
	[[ "${lines[0]}" == *'"GET /p32 HTTP/1.1" 500 '* ]]
	# 4: the last ten.
	run -0 bash -c "$(sed -n 4p "$TMP/ex")"
	[ "${#lines[@]}" -eq 10 ]
	[[ "${lines[9]}" == *'"GET /p45 HTTP/1.1" 200 '* ]]
	# 5: the offset file, under $HOME.
	run -0 bash -c "$(sed -n 5p "$TMP/ex")"
	[ "${#lines[@]}" -eq 45 ]
	[ -s "$TMP/.nginx.offset" ]
	# 6-8.
	run -0 bash -c "$(sed -n 6p "$TMP/ex")"
	[ "${lines[0]}" = "0	0	alice	login" ]
	run -0 timeout 10 bash -c "$(sed -n 7p "$TMP/ex")"
	[ "${#lines[@]}" -eq 1 ]
	run -0 bash -c "$(sed -n 8p "$TMP/ex")"
	[[ "$output" == *"nginx	0	0	"* ]]
	[[ "$output" == *"events	0	0	"* ]]
}

@test "docs: the bash completion offers flags, values and topics" {
	start_broker
	echo x | klog-produce -t completed
	run -0 bash -c 'source "$1/completions/klog.bash"
		COMP_WORDS=(klog-consume --re); COMP_CWORD=1; _klog_consume
		echo "${COMPREPLY[*]}"
		COMP_WORDS=(klog-consume -o ""); COMP_CWORD=2; _klog_consume
		echo "${COMPREPLY[*]}"
		COMP_WORDS=(klog-produce -a ""); COMP_CWORD=2; _klog_produce
		echo "${COMPREPLY[*]}"
		COMP_WORDS=(klog-produce -t comp); COMP_CWORD=2; _klog_produce
		echo "${COMPREPLY[*]}"
		complete -p klog-produce klog-consume' _ "$KLOG_ROOT"
	[ "${lines[0]}" = "--reset --retry-for" ]
	[ "${lines[1]}" = "beginning end s@" ]
	[ "${lines[2]}" = "0 1 all" ]
	[ "${lines[3]}" = "completed" ]
	[ "${lines[4]}" = "complete -F _klog_produce klog-produce" ]
	[ "${lines[5]}" = "complete -F _klog_consume klog-consume" ]
}
