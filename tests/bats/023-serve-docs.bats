#!/usr/bin/env bats
# klog-serve's documentation holds: the man page lints, every EXAMPLES
# command starts a broker that serves and stops cleanly, and every flag of
# -h is in the man page and in both completions.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	common_setup
}

teardown() {
	common_teardown
}

# The "$ command" lines of a man page's EXAMPLES section.
examples() {
	awk '/^\.Sh EXAMPLES/ { on = 1; next }
	    /^\.Sh / { on = 0 }
	    on && /^\$ / { sub(/^\$ /, ""); print }' "$1"
}

# The literal block after "# klog.conf" in the EXAMPLES.
example_conf() {
	awk '/^# klog.conf$/ { on = 1; next }
	    on && /^\.Ed/ { exit }
	    on { print }' "$1"
}

# The flags of klog-serve -h, one per line.
help_flags() {
	klog-serve -h | grep -E '^ +-' | sed -E 's/^ +//; s/   .*//' |
	    grep -oE -- '-{1,2}[A-Za-z][A-Za-z-]*'
}

# The lines of a completion file between the klog-serve block markers.
block() {
	sed -n '/^# --- klog-serve ---$/,/^# --- end klog-serve ---$/p' "$1"
}

@test "serve docs: the man page passes mandoc -Tlint" {
	command -v mandoc >/dev/null || skip "no mandoc"
	run -0 mandoc -Tlint -Wwarning "$KLOG_ROOT/man/klog-serve.1"
	[ -z "$output" ]
}

# Each example runs in $TMP with its port and directories moved there; it
# must serve a round trip and exit 0 on SIGTERM.
@test "serve docs: every example of klog-serve(1) serves and stops cleanly" {
	local cmd port pid n=0 rc
	cd "$TMP"
	example_conf "$KLOG_ROOT/man/klog-serve.1" >"$TMP/klog.conf.in"
	[ -s "$TMP/klog.conf.in" ]
	while IFS= read -r cmd; do
		n=$((n + 1))
		port=$(free_port)
		sed "s|/var/lib/klog|$TMP/var$n|; s|0.0.0.0:9092|127.0.0.1:$port|" \
			"$TMP/klog.conf.in" >"$TMP/klog.conf"
		cmd=${cmd//\/var\/lib\/klog/$TMP/var$n}
		cmd=${cmd//0.0.0.0:9092/127.0.0.1:$port}
		[[ "$cmd" == *" -l "* || "$cmd" == *" -c "* ]] ||
			cmd="$cmd -l 127.0.0.1:$port"
		[[ "$cmd" == *" -d "* || "$cmd" == *" -c "* ]] ||
			cmd="$cmd -d $TMP/data$n"
		bash -c "exec $cmd" 2>"$TMP/log$n" &
		pid=$!
		PIDS+=("$pid")
		wait_port "$port" 5 || { echo "$cmd"; cat "$TMP/log$n"; false; }
		# The config example has no auto-create: use its topic.
		echo "example $n" | klog-produce -b "127.0.0.1:$port" -t events
		run -0 klog-consume -b "127.0.0.1:$port" -t events \
			-o beginning -e
		[ "$output" = "example $n" ]
		kill -TERM "$pid"
		rc=0
		wait "$pid" || rc=$?
		[ "$rc" -eq 0 ] || { echo "$cmd: exit $rc"; cat "$TMP/log$n"; false; }
	done < <(examples "$KLOG_ROOT/man/klog-serve.1")
	[ "$n" -eq 5 ]
	# The config example did what it says.
	[ -d "$TMP/var5/events-7" ]
	[ -d "$TMP/var5/audit-0" ]
	[ -e "$TMP/var2/events-7" ]
	[ -e "$TMP/var2/.klog_cleanshutdown" ]
}

@test "serve docs: every flag of -h is in the man page and both completions" {
	local f
	local man="$KLOG_ROOT/man/klog-serve.1"
	block "$KLOG_ROOT/completions/klog.bash" | sed -n "/local opts='/,/'\$/p" |
	    grep -oE -- '-{1,2}[A-Za-z][A-Za-z-]*' | sort -u >"$TMP/bash"
	block "$KLOG_ROOT/completions/_klog" |
	    grep -oE -- '-{1,2}[A-Za-z][A-Za-z-]*' | sort -u >"$TMP/zsh"
	grep '^\.It Fl ' "$man" | sed 's/^\.It Fl //; s/ , / /g' |
	    awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^-/) print "-" $i;
	        else if (i == 1) print "-" $i }' | sort -u >"$TMP/man"
	[ "$(help_flags | wc -l)" -ge 25 ]
	for f in $(help_flags); do
		grep -qxF -- "$f" "$TMP/man" || { echo "$f not in the man page"; false; }
		grep -qxF -- "$f" "$TMP/bash" || { echo "$f not in klog.bash"; false; }
		grep -qxF -- "$f" "$TMP/zsh" || { echo "$f not in _klog"; false; }
	done
	# ...and nothing the tool does not know.
	for f in $(cat "$TMP/bash") $(cat "$TMP/man"); do
		help_flags | grep -qxF -- "$f" || { echo "unknown flag $f"; false; }
	done
}

@test "serve docs: the bash completion offers flags and directories" {
	mkdir -p "$TMP/datadir"
	run -0 bash -c 'source "$1/completions/klog.bash"
		COMP_WORDS=(klog-serve --retention-); COMP_CWORD=1; _klog_serve
		echo "${COMPREPLY[*]}"
		cd "$2" && COMP_WORDS=(klog-serve -d data); COMP_CWORD=2
		_klog_serve
		echo "${COMPREPLY[*]}"
		COMP_WORDS=(klog-serve --partitions ""); COMP_CWORD=2
		_klog_serve
		echo "[${COMPREPLY[*]}]"
		complete -p klog-serve' _ "$KLOG_ROOT" "$TMP"
	[ "${lines[0]}" = "--retention-bytes --retention-hours" ]
	[ "${lines[1]}" = "datadir" ]
	[ "${lines[2]}" = "[]" ]
	[ "${lines[3]}" = "complete -F _klog_serve klog-serve" ]
}
