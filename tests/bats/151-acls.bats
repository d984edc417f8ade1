#!/usr/bin/env bats
# klog-group --acls FILE acls add|remove|list: a standalone broker's ACL
# file edited with kafka-acls' flags and listed in its format; the file's
# mode, its lock and its strict reading; one line on stderr and the
# documented status for every refusal; the man page's examples.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	common_setup
	unset KLOG_BROKERS KLOG_ZOOKEEPER
	ACLS=$TMP/acls
}

teardown() {
	common_teardown
}

acls() {
	klog-group --acls "$ACLS" acls "$@"
}

# refused STATUS LINE CMD...: exit STATUS, nothing on stdout, LINE on
# stderr (then the hint, for a usage error).
refused() {
	local st=$1 want=$2
	shift 2
	run "-$st" --separate-stderr "$@"
	[ -z "$output" ] || { echo "stdout: $output"; false; }
	[ "${stderr_lines[0]}" = "$want" ] || { echo "stderr: $stderr"; false; }
	if [ "$st" -eq 64 ]; then
		[ "${#stderr_lines[@]}" -eq 2 ]
		[ "${stderr_lines[1]}" = "Try 'klog-group -h'" ]
	else
		[ "${#stderr_lines[@]}" -eq 1 ]
	fi
}

@test "acls: add, list and remove round trip, in kafka-acls' format" {
	run -0 --separate-stderr acls add --allow-principal User:alice \
		--operation Read --operation write -t clicks
	[ -z "$output" ] && [ -z "$stderr" ]
	acls add --allow-principal 'User:CN=app, O=Acme' --deny-principal 'User:*' \
		--operation Describe -g app- --prefixed --allow-host 10.0.0.7
	acls add --allow-principal User:broker --operation ClusterAction --cluster
	# Again: nothing changes.
	acls add --allow-principal User:alice --operation READ -t clicks
	run -0 acls list
	# (a here-document with <<- would strip the ACL lines' tab)
	local T=$'\t'
	[ "$output" = "Current ACLs for resource \`ResourcePattern(resourceType=TOPIC, name=clicks, patternType=LITERAL)\`:
$T(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)
$T(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)

Current ACLs for resource \`ResourcePattern(resourceType=GROUP, name=app-, patternType=PREFIXED)\`:
$T(principal=User:*, host=*, operation=DESCRIBE, permissionType=DENY)
$T(principal=User:CN=app, O=Acme, host=10.0.0.7, operation=DESCRIBE, permissionType=ALLOW)

Current ACLs for resource \`ResourcePattern(resourceType=CLUSTER, name=kafka-cluster, patternType=LITERAL)\`:
$T(principal=User:broker, host=*, operation=CLUSTER_ACTION, permissionType=ALLOW)" ]
	# Each resource ends in an empty line, as in Kafka.
	[ "$(acls list | tail -c 2 | od -An -c | tr -d ' ')" = '\n\n' ]
	run -0 acls list -t clicks
	[ "${#lines[@]}" -eq 3 ]
	run -0 acls list -g app-
	[ "$output" = "" ]
	run -0 acls list -g app- --prefixed --cluster
	[ "${#lines[@]}" -eq 5 ]
	# The file, as documented.
	[ "$(cat "$ACLS")" = "$(cat <<-'EOF'
	# klog ACLs: permission operation resource pattern name [host=IP] principal
	allow read topic literal clicks User:alice
	allow write topic literal clicks User:alice
	deny describe group prefixed app- User:*
	allow describe group prefixed app- host=10.0.0.7 User:CN=app, O=Acme
	allow cluster_action cluster literal kafka-cluster User:broker
	EOF
	)" ]

	# Remove: alice's READ; then everything of the group (-f).
	run -0 --separate-stderr acls remove --allow-principal User:alice \
		--operation read -t clicks
	[ -z "$output" ] && [ -z "$stderr" ]
	run -0 acls list -t clicks
	[ "${lines[1]}" = "$(printf '\t(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)')" ]
	acls remove -g app- --prefixed -f
	acls remove --cluster --allow-principal User:broker
	run -0 acls list
	[ "${#lines[@]}" -eq 2 ]
	acls remove -t clicks -f
	run -0 --separate-stderr acls list
	[ "$output" = "" ] && [ "$stderr" = "" ]
	[ "$(cat "$ACLS")" = "# klog ACLs: permission operation resource pattern name [host=IP] principal" ]
}

@test "acls: list -J is one JSON object per ACL" {
	acls add --allow-principal 'User:CN=a "quoted" one' --operation All -t '*'
	acls add --deny-principal User:bob --deny-host ::1 --operation Read -g g
	run -0 acls list -J
	[ "${#lines[@]}" -eq 2 ]
	[ "$(echo "${lines[0]}" | jq -c .)" = '{"resource_type":"TOPIC","name":"*","pattern_type":"LITERAL","principal":"User:CN=a \"quoted\" one","host":"*","operation":"ALL","permission_type":"ALLOW"}' ]
	[ "$(echo "${lines[1]}" | jq -r '[.resource_type,.host,.operation,.permission_type] | join(" ")')" = "GROUP ::1 READ DENY" ]
}

@test "acls: the file is 0600 whatever the umask, edits take a lock, no temporary is left" {
	(umask 0; acls add --allow-principal User:a --operation read -t t)
	[ "$(stat -c %a "$ACLS")" = 600 ]
	[ "$(stat -c %a "$ACLS.lock")" = 600 ]
	[ ! -e "$ACLS.tmp" ]
	chmod 644 "$ACLS"
	acls add --allow-principal User:b --operation read -t t
	[ "$(stat -c %a "$ACLS")" = 600 ]
	# Twenty editors at once: none loses another's ACL.
	for i in $(seq 1 20); do
		acls add --allow-principal "User:u$i" --operation write -t t &
	done
	wait
	[ "$(grep -c '^allow write topic literal t User:u' "$ACLS")" -eq 20 ]
	# While another holds the lock, an edit waits for it.
	flock "$ACLS.lock" sleep 1 &
	sleep 0.2
	local t0 t1
	t0=$(date +%s%N)
	acls add --allow-principal User:late --operation read -t t
	t1=$(date +%s%N)
	wait
	[ $(( (t1 - t0) / 1000000 )) -ge 500 ]
	grep -q 'User:late$' "$ACLS"
}

@test "acls: a hand-written file is read whole and written back in order" {
	printf '%s\r\n' '# mine' '' \
		'ALLOW Read Topic Prefixed logs.   HOST=0:0::1   User:CN=x, OU=Ops Team,O=Acme  ' \
		'deny ClusterAction cluster literal kafka-cluster User:*' >"$ACLS"
	chmod 600 "$ACLS"
	run -0 acls list
	[ "${lines[1]}" = "$(printf '\t(principal=User:CN=x, OU=Ops Team,O=Acme, host=::1, operation=READ, permissionType=ALLOW)')" ]
	acls add --allow-principal User:a --operation alter -t logs.x
	[ "$(cat "$ACLS")" = "$(cat <<-'EOF'
	# klog ACLs: permission operation resource pattern name [host=IP] principal
	allow alter topic literal logs.x User:a
	allow read topic prefixed logs. host=::1 User:CN=x, OU=Ops Team,O=Acme
	deny cluster_action cluster literal kafka-cluster User:*
	EOF
	)" ]
}

@test "acls: a file that does not parse is 65 with its line, and is left alone" {
	printf 'allow read topic literal t User:a\nallow reed topic literal t User:a\n' >"$ACLS"
	chmod 600 "$ACLS"
	local before
	before=$(cat "$ACLS")
	refused 65 "klog-group: $ACLS:2: operation \"reed\": not one of READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALL" \
		acls list
	refused 65 "klog-group: $ACLS:2: operation \"reed\": not one of READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALL" \
		acls add --allow-principal User:b --operation read -t t
	[ "$(cat "$ACLS")" = "$before" ]
	printf 'allow write group literal g User:a\n' >"$ACLS"
	refused 65 "klog-group: $ACLS:1: operation WRITE does not apply to a GROUP (its operations: READ, DELETE, DESCRIBE, ALL)" \
		acls list
	printf 'allow read topic literal t\n' >"$ACLS"
	refused 65 "klog-group: $ACLS:1: no principal; want: allow|deny OPERATION RESOURCE literal|prefixed NAME [host=IP] PRINCIPAL" \
		acls list
}

@test "acls: failures are one line and status 1: missing, writable by others, nothing to remove" {
	refused 1 "klog-group: $ACLS: No such file or directory" acls list
	refused 1 "klog-group: $ACLS: No such file or directory" \
		acls remove -t t -f
	[ ! -e "$ACLS" ] && [ ! -e "$ACLS.lock" ]
	acls add --allow-principal User:a --operation read -t t
	local before
	before=$(cat "$ACLS")
	refused 1 "klog-group: acls remove: no ACL matches; nothing removed" \
		acls remove --allow-principal User:b -t t
	refused 1 "klog-group: acls remove: no ACL matches; nothing removed" \
		acls remove --allow-principal User:a --operation write -t t
	refused 1 "klog-group: acls remove: no ACL matches; nothing removed" \
		acls remove --deny-principal User:a -t t
	[ "$(cat "$ACLS")" = "$before" ]
	chmod 664 "$ACLS"
	refused 1 "klog-group: $ACLS: writable by group or others (mode 0664): chmod go-w it" \
		acls list
	chmod 600 "$ACLS"
	[ -w /dev/full ] || skip "no /dev/full"
	run -74 --separate-stderr bash -c 'klog-group --acls "$1" acls list >/dev/full' _ "$ACLS"
	[ "$stderr" = "klog-group: stdout: No space left on device" ]
}

@test "acls: bad command lines are 64 with one line and the hint, the file untouched" {
	acls add --allow-principal User:a --operation read -t t
	local before
	before=$(cat "$ACLS")
	refused 64 'klog-group: --allow-principal: principal "alice": want User:NAME (Kafka'"'"'s principal type, as written)' \
		acls add --allow-principal alice --operation read -t t
	refused 64 'klog-group: --operation: operation "reed": not one of READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALL' \
		acls add --allow-principal User:a --operation reed -t t
	# One ACL of many that cannot be: none is added.
	refused 64 "klog-group: acls add: operation WRITE does not apply to a GROUP (its operations: READ, DELETE, DESCRIBE, ALL)" \
		acls add --allow-principal User:z --operation read --operation write -t t -g g
	refused 64 "klog-group: acls add: operation READ does not apply to a CLUSTER (its operations: CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALL)" \
		acls add --allow-principal User:z --operation read --cluster
	refused 64 'klog-group: topic "a/b": byte 0x2f not allowed (only A-Z a-z 0-9 . _ -)' \
		acls add --allow-principal User:a --operation read -t a/b
	refused 64 "klog-group: -t *: every name is the literal *, without --prefixed" \
		acls add --allow-principal User:a --operation read -t '*' --prefixed
	refused 64 "klog-group: -g: a prefix: byte 0x20 not allowed (only A-Z a-z 0-9 . _ -)" \
		acls add --allow-principal User:a --operation read -g 'a b' --prefixed
	refused 64 "klog-group: --prefixed needs -t or -g" \
		acls add --allow-principal User:a --operation create --cluster --prefixed
	refused 64 'klog-group: --allow-host: host "example.com": neither * nor an IP address (names are not resolved)' \
		acls add --allow-principal User:a --allow-host example.com --operation read -t t
	refused 64 "klog-group: --deny-host needs --deny-principal" \
		acls add --allow-principal User:a --deny-host 10.0.0.1 --operation read -t t
	refused 64 "klog-group: acls add needs -t, -g or --cluster" \
		acls add --allow-principal User:a --operation read
	refused 64 "klog-group: acls add needs --allow-principal or --deny-principal" \
		acls add --operation read -t t
	refused 64 "klog-group: acls add needs --operation" \
		acls add --allow-principal User:a -t t
	refused 64 "klog-group: acls add does not take -f" \
		acls add --allow-principal User:a --operation read -t t -f
	refused 64 "klog-group: acls remove without --allow-principal or --deny-principal removes every ACL of the resource: give -f" \
		acls remove -t t
	refused 64 "klog-group: acls list takes only --acls or -Z, -t, -g, --cluster, --prefixed and -J" \
		acls list --operation read
	refused 64 "klog-group: acls needs add, remove or list" acls
	refused 64 "klog-group: acls frob: unknown; want add, remove or list" acls frob
	refused 64 "klog-group: extra: unexpected argument" acls list extra
	refused 64 "klog-group: acls needs --acls FILE or -Z" \
		klog-group acls list
	refused 64 "klog-group: acls -Z keeps the ACLs in ZooKeeper: --acls FILE is a standalone broker's" \
		klog-group -Z 127.0.0.1:1 --acls "$ACLS" acls list
	refused 64 "klog-group: acls edits a file (--acls FILE) or ZooKeeper (-Z), not a broker (-b)" \
		klog-group -b 127.0.0.1:1 --acls "$ACLS" acls list
	refused 64 "klog-group: acls does not take --partitions" \
		acls list --partitions 2
	refused 64 "klog-group: list does not take --acls" \
		klog-group --acls "$ACLS" list
	refused 64 "klog-group: describe does not take --operation" \
		klog-group describe -g g --operation read
	refused 64 "klog-group: --acls given twice" \
		acls list --acls "$ACLS"
	[ "$(cat "$ACLS")" = "$before" ]
	# $KLOG_ZOOKEEPER is not -Z: acls still takes its file.
	KLOG_ZOOKEEPER=127.0.0.1:1 run -0 acls list
	[ "${#lines[@]}" -eq 2 ]
}

@test "acls: the man page's examples run" {
	local cmds
	cmds=$(sed -n 's/^\.Dl \$ \(klog-group --acls .*\)/\1/p' \
		"$KLOG_ROOT/man/klog-group.1" | sed "s|/etc/klog/acls|$ACLS|g")
	[ "$(printf '%s\n' "$cmds" | wc -l)" -eq 5 ]
	run -0 bash -ec "$cmds"
	[ "${lines[0]}" = 'Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=app-, patternType=PREFIXED)`:' ]
	# (bats leaves the empty lines out of $lines)
	[ "${lines[2]}" = 'Current ACLs for resource `ResourcePattern(resourceType=GROUP, name=app-reports, patternType=LITERAL)`:' ]
	[ "${lines[4]}" = 'Current ACLs for resource `ResourcePattern(resourceType=CLUSTER, name=kafka-cluster, patternType=LITERAL)`:' ]
	[ "${lines[5]}" = "$(printf '\t(principal=User:CN=broker-2,O=klog, host=*, operation=CLUSTER_ACTION, permissionType=ALLOW)')" ]
	[ "${#lines[@]}" -eq 6 ]
	run -0 acls list -g app-reports
	[ "$output" = "" ]
	run -0 acls list
	[ "${#lines[@]}" -eq 4 ]
}
