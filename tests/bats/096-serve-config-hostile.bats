#!/usr/bin/env bats
# klog-serve -c with files that are not what they should be: over-long
# lines, NUL bytes, binary junk, endless devices, directories.  Each is
# refused with one line naming the file (and the line), exit 64, before
# anything is created; nothing in them is ever half-applied.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	common_setup
	cd "$TMP"
}

teardown() {
	common_teardown
}

# refused FILE MESSAGE: klog-serve -c FILE exits 64 with MESSAGE first.
refused() {
	run -64 --separate-stderr timeout 10 klog-serve -c "$1" -d "$TMP/d" \
		-l "127.0.0.1:$(free_port)"
	[ "${stderr_lines[0]}" = "klog-serve: $2" ]
	[ "${stderr_lines[1]}" = "Try 'klog-serve -h'" ]
	[ ! -e "$TMP/d" ]
}

@test "config: a line over 4096 bytes is refused, not split into settings" {
	# A comment whose tail, past 4096 bytes, looks like a setting.
	{
		printf '# '
		head -c 5000 /dev/zero | tr '\0' x
		printf ' data-dir = %s/elsewhere\n' "$TMP"
	} >long.conf
	refused long.conf "long.conf:1: longer than 4096 bytes"
	[ ! -e "$TMP/elsewhere" ]
}

@test "config: a NUL byte is refused, not taken as the end of the value" {
	printf 'data-dir = %s/d\000/etc\n' "$TMP" >nul.conf
	refused nul.conf "nul.conf:1: NUL byte"
}

@test "config: binary junk is refused at its first line" {
	printf '\177ELF\002\001\001\000\000\n' >junk.conf
	refused junk.conf "junk.conf:1: NUL byte"
	head -c 3000 /dev/urandom | tr -d '\000\n=' >junk2.conf
	echo >>junk2.conf
	refused junk2.conf 'junk2.conf:1: expected "key = value"'
}

@test "config: an endless file, a directory, an unreadable file" {
	refused /dev/zero "/dev/zero: larger than 1048576 bytes"
	mkdir dir.conf
	refused dir.conf "dir.conf: Is a directory"
	refused missing.conf "missing.conf: No such file or directory"
}

@test "config: CRLF lines, blanks and '=' in values are read as meant" {
	port=$(free_port)
	printf 'data-dir = %s/crlf\r\n\t listen=127.0.0.1:%s \r\n# x = y\r\ntopic = a:2\r\n' \
		"$TMP" "$port" >crlf.conf
	klog-serve -c crlf.conf 2>"$TMP/serve.log" &
	PIDS+=($!)
	wait_port "$port" 5
	run -0 klog-consume -b "127.0.0.1:$port" -L -t a
	[ "${#lines[@]}" -eq 2 ]
	[ -d "$TMP/crlf/a-1" ]
}
