#!/usr/bin/env bats
# klog-dump's documentation holds: every EXAMPLES command of klog-dump(1)
# and klog-format(5) runs, and every flag of -h is in the man page and in
# both completions.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	common_setup
	# The data directory the examples talk about.
	mkdir -p "$TMP/data/events-0"
	cp "$DATA/dump-valid.bin" "$TMP/data/events-0/00000000000000000000.klog"
	cp "$DATA/dump-valid.bin" "$TMP/data/events-0/00000000000000000169.klog"
	cp "$DATA/dump-valid.bin" "$TMP/data/copy.bin"
	mkdir -p "$TMP/data/clicks-0"
	cp "$DATA/dump-records.bin" "$TMP/data/clicks-0/00000000000000000000.klog"
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

# The flags of klog-dump -h, one per line.
help_flags() {
	klog-dump -h | grep -E '^ +-' | sed -E 's/^ +//; s/   .*//' |
	    grep -oE -- '-{1,2}[A-Za-z][A-Za-z-]*'
}

# The lines of a completion file between the klog-dump block markers.
block() {
	sed -n '/^# --- klog-dump ---$/,/^# --- end klog-dump ---$/p' "$1"
}

@test "docs: the man pages pass mandoc -Tlint" {
	command -v mandoc >/dev/null || skip "no mandoc"
	run -0 mandoc -Tlint -Wwarning "$KLOG_ROOT/man/klog-dump.1" \
	    "$KLOG_ROOT/man/klog-format.5"
	[ -z "$output" ]
}

@test "docs: every example of klog-dump(1) works" {
	local cmd n=0
	cd "$TMP/data"
	while IFS= read -r cmd; do
		n=$((n + 1))
		run -0 --separate-stderr bash -c "$cmd"
		[ -z "$stderr" ] || { echo "$cmd: $stderr"; false; }
	done < <(examples "$KLOG_ROOT/man/klog-dump.1")
	[ "$n" -ge 8 ]
	# A few of them, checked closer.
	run -0 bash -c 'klog-dump --verify --deep events-0 && echo intact'
	[ "$output" = intact ]
	run -0 bash -c "klog-dump -s -J --deep events-0 | jq -s 'map(.messages) | add'"
	[ "$output" = 18 ]
	run -0 klog-dump -o 169 -n 3 -P 0 events-0
	[ "${#lines[@]}" -eq 3 ]
	[[ "${lines[0]}" == 'offset=169 pos=0 '* ]]
	run -0 klog-dump -b 169 copy.bin
	[[ "${lines[0]}" == 'offset=169 pos=0 '* ]]
	run -0 bash -c "klog-dump -J --deep clicks-0 | jq -c 'select(.kafka_offset) | [.kafka_offset, .key, .timestamp]' | head -n 2"
	[ "${lines[0]}" = '[14,"k1",1700000000000]' ]
	[ "${lines[1]}" = '[15,null,1700000000005]' ]
	run -0 bash -c "klog-dump -s -J clicks-0 | jq -s 'map(.records) | add'"
	[ "$output" = 6 ]
}

@test "docs: every example of klog-format(5) works" {
	local cmd n=0
	cd "$TMP/data"
	while IFS= read -r cmd; do
		n=$((n + 1))
		run -0 --separate-stderr bash -c "$cmd"
		[ -z "$stderr" ]
	done < <(examples "$KLOG_ROOT/man/klog-format.5")
	[ "$n" -eq 2 ]
	run -0 bash -c 'printf hello | gzip -c | tail -c 8 | od -An -tx1'
	[[ "$output" == *'86 a6 10 36'* ]]
}

@test "docs: every flag of -h is in the man page and both completions" {
	local f
	local man="$KLOG_ROOT/man/klog-dump.1"
	block "$KLOG_ROOT/completions/klog.bash" | sed -n "/local opts='/,/'\$/p" |
	    grep -oE -- '-{1,2}[A-Za-z][A-Za-z-]*' | sort -u >"$TMP/bash"
	block "$KLOG_ROOT/completions/_klog" |
	    grep -oE -- '-{1,2}[A-Za-z][A-Za-z-]*' | sort -u >"$TMP/zsh"
	grep '^\.It Fl ' "$man" | sed 's/^\.It Fl //; s/ , / /g' |
	    awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^-/) print "-" $i;
	        else if (i == 1) print "-" $i }' | sort -u >"$TMP/man"
	[ "$(help_flags | wc -l)" -ge 16 ]
	for f in $(help_flags); do
		grep -qxF -- "$f" "$TMP/man" || { echo "$f not in the man page"; false; }
		grep -qxF -- "$f" "$TMP/bash" || { echo "$f not in klog.bash"; false; }
		grep -qxF -- "$f" "$TMP/zsh" || { echo "$f not in _klog"; false; }
	done
	# ...and nothing the tool does not know.
	for f in $(cat "$TMP/bash"); do
		help_flags | grep -qxF -- "$f" || { echo "klog.bash: $f"; false; }
	done
}

@test "docs: the bash completion offers the flags and files" {
	run -0 bash -c 'source "$1/completions/klog.bash"
		COMP_WORDS=(klog-dump --ver); COMP_CWORD=1; _klog_dump
		echo "${COMPREPLY[*]}"
		COMP_WORDS=(klog-dump -o ""); COMP_CWORD=2; _klog_dump
		echo "[${COMPREPLY[*]}]"
		cd "$2" && COMP_WORDS=(klog-dump eve); COMP_CWORD=1; _klog_dump
		echo "${COMPREPLY[*]}"
		complete -p klog-dump' _ "$KLOG_ROOT" "$TMP/data"
	[ "${lines[0]}" = "--verbose --verify --version" ]
	[ "${lines[1]}" = "[]" ]
	[ "${lines[2]}" = "events-0" ]
	[ "${lines[3]}" = "complete -F _klog_dump klog-dump" ]
}
