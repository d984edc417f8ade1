#!/usr/bin/env bats
# klog-group users on a standalone broker's users file: the password from
# stdin or a file and never an argument, the file mode 0600 and holding
# Kafka's SCRAM credentials (checked here against Python's PBKDF2), lists
# without keys, bad input refused with the documented status and one
# line, writers that take turns, and the man page's examples.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	common_setup
	unset KLOG_ZOOKEEPER KLOG_BROKERS
	USERS="$TMP/users"
}

teardown() {
	common_teardown
}

# users ARGS...: klog-group on $USERS.
users() {
	klog-group --users "$USERS" users "$@"
}

@test "users: add from stdin; mode 0600, no password in the file, both mechanisms, a table" {
	run -0 --separate-stderr bash -c 'printf "hunter2\n" | klog-group --users "$1" users add alice' _ "$USERS"
	[ -z "$stderr" ]
	[ "$output" = "$(printf 'USER\tMECHANISM\tITERATIONS\nalice\tSCRAM-SHA-256\t4096\nalice\tSCRAM-SHA-512\t4096')" ]
	[ "$(stat -c %a "$USERS")" = 600 ]
	! grep -q hunter2 "$USERS"
	[ "$(grep -c '^alice SCRAM-SHA-' "$USERS")" -eq 2 ]
	# Replaced, not added twice; another user beside.
	printf 'hunter3\n' | users add alice --mechanism SCRAM-SHA-256 --iterations 8192 >/dev/null
	printf 'pw\r\n' | users add bob --mechanism SCRAM-SHA-512 >/dev/null
	run -0 users list
	[ "$output" = "$(printf 'USER\tMECHANISM\tITERATIONS\nalice\tSCRAM-SHA-256\t8192\nalice\tSCRAM-SHA-512\t4096\nbob\tSCRAM-SHA-512\t4096')" ]
	run -0 klog-group --users "$USERS" -H -J users list bob
	[ "$output" = '{"user":"bob","mechanism":"SCRAM-SHA-512","iterations":4096}' ]
	# No key in any listing.
	run -0 klog-group --users "$USERS" -J users list
	[[ "$output" != *salt* && "$output" != *key* ]]
}

# check_cred FILE NAME MECHANISM PASSWORD: the line's stored and server
# keys are those of PASSWORD, by Python's own PBKDF2 and HMAC (RFC 5802).
check_cred() {
	python3 - "$@" <<-'PY'
	import base64, hashlib, hmac, sys
	path, name, mech, pw = sys.argv[1:5]
	h = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}[mech]
	for line in open(path):
	    f = line.split()
	    if len(f) == 3 and f[0] == name and f[1] == mech:
	        c = dict(kv.split("=", 1) for kv in f[2].split(","))
	        break
	else:
	    sys.exit("no line")
	assert sorted(c) == ["iterations", "salt", "server_key", "stored_key"], c
	salted = hashlib.pbkdf2_hmac(h, pw.encode(), base64.b64decode(c["salt"]),
	                             int(c["iterations"]))
	ck = hmac.new(salted, b"Client Key", h).digest()
	sk = hmac.new(salted, b"Server Key", h).digest()
	assert base64.b64decode(c["stored_key"]) == hashlib.new(h, ck).digest()
	assert base64.b64decode(c["server_key"]) == sk
	assert len(base64.b64decode(c["salt"])) == 16
	PY
}

@test "users: the file holds Kafka's SCRAM credentials of the password, line end left out" {
	printf 'pencil\n' | users add user >/dev/null
	printf 'tab\there and \xc3\xa9\r\n' | users add carol --iterations 4097 >/dev/null
	check_cred "$USERS" user SCRAM-SHA-256 pencil
	check_cred "$USERS" user SCRAM-SHA-512 pencil
	check_cred "$USERS" carol SCRAM-SHA-512 "$(printf 'tab\there and \xc3\xa9')"
	grep -q '^carol SCRAM-SHA-256 .*,iterations=4097$' "$USERS"
	run ! check_cred "$USERS" user SCRAM-SHA-256 pencil2
}

@test "users: the password is never an argument, and never shown" {
	local pid fd n=100
	mkfifo "$TMP/pw"
	# Both ends held here, so that the tool's open does not wait (bats
	# keeps fd 3 for itself).
	exec {fd}<>"$TMP/pw"
	klog-group --users "$USERS" users add bob <"$TMP/pw" >/dev/null &
	pid=$!
	# Waiting on its stdin: nothing of the password on its command line.
	until tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q '^klog-group .*users add bob'; do
		n=$((n - 1)); [ "$n" -gt 0 ]; sleep 0.05
	done
	! grep -q s3cret "/proc/$pid/cmdline"
	echo s3cret >&"$fd"
	wait "$pid"
	exec {fd}>&-
	check_cred "$USERS" bob SCRAM-SHA-256 s3cret
	# --password is refused by name, its value not echoed.
	run -64 --separate-stderr klog-group --users "$USERS" --password s3cret users add bob
	[ "${stderr_lines[0]}" = "klog-group: --password: a password is never taken as an argument, which ps(1) shows: give it on stdin or in --password-file" ]
	[[ "$stderr" != *s3cret* ]]
	run -64 --separate-stderr klog-group --users "$USERS" --password=s3cret users add bob
	[[ "$stderr" != *s3cret* ]]
	# A password file: its first line only; a missing one named, not read.
	printf 'from-a-file\nsecond line\n' >"$TMP/pw.txt"
	run -0 users add dave --password-file "$TMP/pw.txt"
	check_cred "$USERS" dave SCRAM-SHA-512 from-a-file
	run -1 --separate-stderr users add dave --password-file "$TMP/none"
	[ "$stderr" = "klog-group: $TMP/none: No such file or directory" ]
}

# fails STATUS LINE ARGS...: klog-group ARGS... exits STATUS, prints
# nothing on stdout and LINE on stderr (and the hint, for a usage error).
fails() {
	local st=$1 want=$2
	shift 2
	run "-$st" --separate-stderr "$@" </dev/null
	[ -z "$output" ] || { echo "stdout: $output"; false; }
	[ "${stderr_lines[0]}" = "$want" ] || { echo "stderr: $stderr"; false; }
	if [ "$st" -eq 64 ]; then
		[ "${#stderr_lines[@]}" -eq 2 ]
		[ "${stderr_lines[1]}" = "Try 'klog-group -h'" ]
	else
		[ "${#stderr_lines[@]}" -eq 1 ]
	fi
}

@test "users: bad input is refused with the documented status and one line" {
	printf 'pw\n' | users add alice >/dev/null
	fails 64 "klog-group: users add: no password: the first line of stdin is empty" \
		klog-group --users "$USERS" users add bob
	fails 64 "klog-group: users add: not a user name: a control character or white space" \
		klog-group --users "$USERS" users add 'b b'
	fails 64 "klog-group: users add: not a user name: a '#' first" \
		klog-group --users "$USERS" users add '#b'
	fails 64 "klog-group: --iterations 4000: too small" \
		klog-group --users "$USERS" --iterations 4000 users add bob
	fails 64 "klog-group: --mechanism scram-sha-256: want SCRAM-SHA-256, SCRAM-SHA-512 or all" \
		klog-group --users "$USERS" --mechanism scram-sha-256 users add bob
	fails 64 "klog-group: users -Z needs --zk-auth-file: the credentials are made readable by that identity alone" \
		klog-group -Z 127.0.0.1:1 users list
	fails 64 "klog-group: users -Z keeps the users in ZooKeeper: --users FILE is a standalone broker's" \
		klog-group -Z 127.0.0.1:1 --users "$USERS" users list
	fails 64 "klog-group: users needs --users FILE or -Z" klog-group users list
	KLOG_ZOOKEEPER=127.0.0.1:1 fails 64 "klog-group: users --users FILE does not take --zk-auth-file" \
		klog-group --users "$USERS" --zk-auth-file "$USERS" users list
	fails 64 "klog-group: users list does not take --mechanism" \
		klog-group --users "$USERS" --mechanism all users list
	fails 64 "klog-group: list does not take --users" klog-group --users "$USERS" list
	fails 64 "klog-group: users frob: not add, remove or list" klog-group --users "$USERS" users frob
	fails 1 'klog-group: user "bob": no such user' klog-group --users "$USERS" users remove bob
	fails 1 'klog-group: user "bob": no such user' klog-group --users "$USERS" users list bob
	fails 1 "klog-group: $TMP/none: No such file or directory" \
		klog-group --users "$TMP/none" users list
	# A line that is not NAME MECHANISM CREDENTIAL, named, not shown.
	printf 'bob SCRAM-SHA-256 salt=AAAA,stored_key=BBBB\n' >>"$USERS"
	fails 65 "klog-group: $USERS:4: SCRAM-SHA-256 credential: stored_key: not base64 of 32 bytes" \
		klog-group --users "$USERS" users list
	run -65 bash -c 'printf "pw\n" | klog-group --users "$1" users add carol' _ "$USERS"
	sed -i '$d' "$USERS"
	# A file others may read holds secrets in the open: refused.
	chmod 644 "$USERS"
	fails 1 "klog-group: $USERS: others may read or write it (mode 0644): it holds secrets; chmod o-rwx it" \
		klog-group --users "$USERS" users list
	chmod 600 "$USERS"
	run -0 users list alice
}

@test "users: remove by mechanism, then whole; a rewrite keeps the file's mode" {
	printf 'pw\n' | users add alice >/dev/null
	printf 'pw\n' | users add bob >/dev/null
	chmod 640 "$USERS"
	run -0 users remove alice --mechanism SCRAM-SHA-512
	[ "$output" = "$(printf 'USER\tMECHANISM\tITERATIONS\nalice\tSCRAM-SHA-512\t4096')" ]
	[ "$(stat -c %a "$USERS")" = 640 ]
	run -0 users remove bob
	[ "${#lines[@]}" -eq 3 ]
	run -0 klog-group --users "$USERS" -H users list
	[ "$output" = "$(printf 'alice\tSCRAM-SHA-256\t4096')" ]
	run -1 users remove alice --mechanism SCRAM-SHA-512
	# No temporary file is left behind.
	[ "$(ls -A "$TMP" | grep -c '^\.users\.')" -eq 0 ]
}

@test "users: writers at once take turns: every add lands" {
	local i pids=()
	for i in 1 2 3 4 5 6; do
		printf 'pw%s\n' "$i" | users add "user$i" >/dev/null &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i"
	done
	run -0 klog-group --users "$USERS" -H users list
	[ "${#lines[@]}" -eq 12 ]
	for i in 1 2 3 4 5 6; do
		check_cred "$USERS" "user$i" SCRAM-SHA-512 "pw$i"
	done
}

@test "users: the man page's examples run" {
	local cmd n=0
	cd "$TMP"
	printf 'bob-secret\n' >bob.pw
	while IFS= read -r cmd; do
		cmd=${cmd//\/etc\/klog\/users/$USERS}
		printf 'alice-secret\n' | bash -c "$cmd" >"out.$n"
		n=$((n + 1))
	done < <(awk '/^\.Sh EXAMPLES/ { on = 1 } on && /^\.Dl \$ .*users/ {
		sub(/^\.Dl \$ /, ""); print }' "$KLOG_ROOT/man/klog-group.1")
	[ "$n" -eq 4 ]
	check_cred "$USERS" alice SCRAM-SHA-256 alice-secret
	[ "$(cat out.2)" = "$(printf 'USER\tMECHANISM\tITERATIONS\nalice\tSCRAM-SHA-256\t4096\nalice\tSCRAM-SHA-512\t4096\nbob\tSCRAM-SHA-512\t4096')" ]
	run -0 klog-group --users "$USERS" -H users list
	[ "$(echo "$output" | cut -f1 | sort -u)" = alice ]
}
