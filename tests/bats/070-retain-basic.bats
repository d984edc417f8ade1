#!/usr/bin/env bats
# klog-retain on data directories built by hand: the age and size rules,
# dry runs, -t, usage errors, partitions left alone, the lock, exit codes.

bats_require_minimum_version 1.5.0
load helpers

# seg DIR BASE N [SUFFIX]: a segment named after BASE holding N magic-0
# entries of 100 bytes (91-byte payloads), so N * 100 bytes.
seg() {
	python3 - "$@" <<-'PY'
	import struct, sys, zlib
	d, base, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
	suffix = sys.argv[4] if len(sys.argv) > 4 else ".klog"
	out = b""
	for i in range(n):
	    p = bytes((base + i * 7 + j) % 256 for j in range(91))
	    out += struct.pack(">IBI", 5 + len(p), 0, zlib.crc32(p)) + p
	with open("%s/%020d%s" % (d, base, suffix), "wb") as f:
	    f.write(out)
	PY
}

# Files and links under the data directory, with sizes.
listing() {
	(cd "$D" && find . \( -type f -o -type l \) -printf '%p %s\n' | sort)
}

# events-0: 0, 1000 (10 days old), 2000 (3 days), 3000 (new), 1000 bytes
# each.  events-1: one old segment.  logs-0: three old segments, the
# middle one .kafka.  Plus things that are not partitions.
setup() {
	common_setup
	D="$TMP/data"
	mkdir -p "$D/events-0" "$D/events-1" "$D/logs-0" "$TMP/outside-0"
	seg "$D/events-0" 0 10
	seg "$D/events-0" 1000 10
	seg "$D/events-0" 2000 10
	seg "$D/events-0" 3000 10
	seg "$D/events-1" 0 5
	seg "$D/logs-0" 0 10
	seg "$D/logs-0" 1000 10 .kafka
	seg "$D/logs-0" 2000 10
	seg "$TMP/outside-0" 0 10
	seg "$TMP/outside-0" 1000 10
	echo notes >"$D/events-0/README"
	: >"$D/.lock"
	mkdir "$D/events-01" "$D/not_a_partition"
	seg "$D/events-01" 0 10
	seg "$D/events-01" 1000 10
	ln -s "$TMP/outside-0" "$D/linked-0"
	touch -d '10 days ago' "$D"/events-0/00000000000000000000.klog \
		"$D"/events-0/00000000000000001000.klog \
		"$D"/events-1/*.klog "$D"/logs-0/* "$D"/events-01/* \
		"$TMP"/outside-0/*
	touch -d '3 days ago' "$D/events-0/00000000000000002000.klog"
}

teardown() {
	chattr -R -ia "$TMP" 2>/dev/null || true
	common_teardown
}

WEEK_PLAN='events	0	0	1000
events	0	1000	1000
logs	0	0	1000
logs	0	1000	1000'

@test "retain: --dry-run lists the expired segments and deletes nothing" {
	before=$(listing)
	run -0 --separate-stderr klog-retain -n -d "$D" --max-age 7d
	[ "$(cut -f1-4 <<<"$output")" = "$WEEK_PLAN" ]
	[ -z "$stderr" ]
	[ "$(listing)" = "$before" ]
	# The age is whole seconds since the last modification: 10 days.
	age=$(head -n 1 <<<"$output" | cut -f5)
	[ "$age" -ge 864000 ] && [ "$age" -lt 865000 ]
	# A dry run takes no lock.
	[ ! -e "$D/.retain.lock" ]
}

@test "retain: a real run deletes exactly what the dry run listed" {
	run -0 klog-retain -n -d "$D" --max-age 7d
	planned=$(cut -f1-4 <<<"$output")
	run -0 --separate-stderr klog-retain -d "$D" --max-age 7d
	[ "$(cut -f1-4 <<<"$output")" = "$planned" ]
	[ -z "$stderr" ]
	[ "$(cd "$D/events-0" && echo *)" = "00000000000000002000.klog 00000000000000003000.klog README" ]
	[ "$(cd "$D/logs-0" && echo *)" = "00000000000000002000.klog" ]
	[ "$(cd "$D/events-1" && echo *)" = "00000000000000000000.klog" ]
	# What is left is a whole partition that starts later.
	run -0 klog-dump --verify "$D/events-0" "$D/logs-0" "$D/events-1"
	run -0 klog-dump -s "$D/events-0"
	[[ "${lines[0]}" == *"base=2000 first=2000 next=3000 "* ]]
	# Nothing outside the partitions was touched.
	[ -e "$D/events-0/README" ] && [ -e "$D/.lock" ]
	[ "$(ls "$TMP/outside-0" | wc -l)" -eq 2 ]
	[ "$(ls "$D/events-01" | wc -l)" -eq 2 ]
	# Nothing is left to do.
	run -0 klog-retain -d "$D" --max-age 7d
	[ -z "$output" ]
}

@test "retain: the newest segment stays even when everything expired" {
	run -0 --separate-stderr klog-retain -v -d "$D" --max-age 0 -t logs
	[ "$(cut -f1-3 <<<"$output")" = "logs	0	0
logs	0	1000" ]
	[ -e "$D/logs-0/00000000000000002000.klog" ]
	[[ "$stderr" == *"klog-retain: topic \"logs\" partition 0: the newest segment is past the limits too; it is left to the broker"* ]]
	run -0 klog-retain -d "$D" --max-bytes 0 -t logs -t events
	[ "$(cut -f1-3 <<<"$output")" = "events	0	0
events	0	1000
events	0	2000" ]
	[ "$(ls "$D/events-0" | wc -l)" -eq 2 ]   # the newest and README
	[ "$(ls "$D/events-1" | wc -l)" -eq 1 ]
}

@test "retain: --max-bytes keeps at least the limit per partition" {
	# Sizes take K/M/G suffixes in powers of 1024: 3000 - 1000 < 2K.
	run -0 klog-retain -n -d "$D" --max-bytes 2K
	[ "$(cut -f1-3 <<<"$output")" = "events	0	0" ]
	# events-0 has 4000 bytes: 3000 and 2000 are still >= 2000, 1000 not.
	run -0 klog-retain -d "$D" --max-bytes 2000
	[ "$(cut -f1-4 <<<"$output")" = "events	0	0	1000
events	0	1000	1000
logs	0	0	1000" ]
	run -0 klog-retain -d "$D" --max-bytes 2001
	[ -z "$output" ]
}

@test "retain: age and size together, -v totals on stderr" {
	touch "$D"/logs-0/*
	run -0 --separate-stderr klog-retain -v -d "$D" --max-age 7d \
		--max-bytes 1000
	[ "$(cut -f1-3 <<<"$output")" = "events	0	0
events	0	1000
events	0	2000
logs	0	0
logs	0	1000" ]
	[ "$stderr" = "klog-retain: topic \"events\" partition 1: the newest segment is past the limits too; it is left to the broker
klog-retain: deleted 5 segments, 5000 bytes, in 3 partitions" ]
	run -0 --separate-stderr klog-retain -n -v -d "$D" --max-age 7d
	[ "${stderr##*$'\n'}" = "klog-retain: would delete 0 segments, 0 bytes, in 3 partitions" ]
}

@test "retain: -t restricts the topics; an unknown topic is a warning, 1" {
	run -0 klog-retain -d "$D" --max-age 7d -t logs
	[ "$(cut -f1 <<<"$output" | sort -u)" = logs ]
	[ -e "$D/events-0/00000000000000000000.klog" ]
	run -1 --separate-stderr klog-retain -d "$D" --max-age 7d -t events -t nope
	[ "$(cut -f1 <<<"$output" | sort -u)" = events ]
	[ "$stderr" = 'klog-retain: topic "nope": no such topic' ]
	[ ! -e "$D/events-0/00000000000000000000.klog" ]
	run -1 --separate-stderr klog-retain -q -d "$D" --max-age 7d -t nope
	[ -z "$stderr" ]
	run -64 --separate-stderr klog-retain -d "$D" --max-age 7d -t 'a/b'
	[[ "$stderr" == 'klog-retain: -t: topic "a/b": '*"not allowed"* ]]
	run -64 klog-retain -d "$D" --max-age 7d -t ..
}

@test "retain: usage errors exit 64 with a hint" {
	run -64 --separate-stderr klog-retain -d "$D"
	[ "$stderr" = "klog-retain: --max-age or --max-bytes is required
Try 'klog-retain -h'" ]
	run -64 --separate-stderr klog-retain -d "$D" --max-age 7x
	[[ "$stderr" == "klog-retain: --max-age 7x: "* ]]
	run -64 klog-retain -d "$D" --max-age -1d
	run -64 klog-retain -d "$D" --max-age ''
	run -64 --separate-stderr klog-retain -d "$D" --max-bytes 10Q
	[[ "$stderr" == "klog-retain: --max-bytes 10Q: "* ]]
	run -64 klog-retain -d "$D" --max-bytes -5
	run -64 klog-retain -d "$D" --max-age 1d -w soon
	run -64 klog-retain -d "$D" --max-age 1d -q -v
	run -64 klog-retain -d "$D" --max-age 1d extra
	run -64 --separate-stderr klog-retain -d "$D" --max-age 1d --bogus
	[[ "$stderr" == "klog-retain: --bogus: unknown option"* ]]
	run -64 klog-retain --max-age
	run -64 klog-retain -d '' --max-age 1d
	# Nothing was deleted by any of them.
	[ "$(ls "$D/events-0" | wc -l)" -eq 5 ]
}

@test "retain: -h and --version" {
	run -0 --separate-stderr klog-retain -h
	[[ "${lines[0]}" == "usage: klog-retain "* ]]
	[ -z "$stderr" ]
	run -0 klog-retain --version
	[ "$output" = "klog-retain 0.1.0" ]
}

@test "retain: a missing data directory is an error, 1" {
	run -1 --separate-stderr klog-retain -d "$TMP/nope" --max-age 1d
	[ "$stderr" = "klog-retain: open $TMP/nope: No such file or directory" ]
	[ -z "$output" ]
	# A file is not a directory.
	run -74 klog-retain -d "$D/.lock" --max-age 1d
}

@test "retain: the data directory from KLOG_DATA_DIR, else ./klog-data" {
	KLOG_DATA_DIR="$D" run -0 klog-retain --max-age 7d -t logs
	[ "${#lines[@]}" -eq 2 ]
	# -d wins over the environment.
	KLOG_DATA_DIR="$TMP/nope" run -0 klog-retain -d "$D" --max-age 7d
	[ "${#lines[@]}" -eq 2 ]
	mv "$D" "$TMP/klog-data"
	cd "$TMP"
	run -0 klog-retain -n --max-age 1d
	[ "${#lines[@]}" -eq 1 ]
	cd /
	run -1 klog-retain -n --max-age 1d
}

@test "retain: a partition with a gap is left alone with a warning, 1" {
	rm "$D/events-0/00000000000000001000.klog"
	run -1 --separate-stderr klog-retain -d "$D" --max-age 7d
	[ "$stderr" = "klog-retain: $D/events-0/00000000000000002000.klog: gap: the previous segment ends at 1000; partition left alone" ]
	# The others were still done.
	[ "$(cut -f1-3 <<<"$output")" = "logs	0	0
logs	0	1000" ]
	[ -e "$D/events-0/00000000000000000000.klog" ]
	run -1 --separate-stderr klog-retain -q -d "$D" --max-age 7d
	[ -z "$stderr" ]
}

@test "retain: links are not followed, a linked segment leaves its partition alone" {
	ln -s "$TMP/outside-0/00000000000000000000.klog" \
		"$D/events-1/00000000000000000500.klog"
	run -1 --separate-stderr klog-retain -d "$D" --max-age 7d
	[ "$stderr" = "klog-retain: $D/events-1/00000000000000000500.klog: not a regular file; partition left alone" ]
	[ "$(ls "$TMP/outside-0" | wc -l)" -eq 2 ]
	[ -L "$D/events-1/00000000000000000500.klog" ]
	[ -e "$D/events-1/00000000000000000000.klog" ]
}

@test "retain: a segment that cannot be deleted stops its partition: 74" {
	chattr +i "$D/events-0/00000000000000000000.klog" 2>/dev/null ||
		skip "chattr +i is not supported here"
	run -74 --separate-stderr klog-retain -d "$D" --max-age 7d
	[ "$stderr" = "klog-retain: unlink $D/events-0/00000000000000000000.klog: Operation not permitted" ]
	# No hole: 1000 stays behind 0; the other partitions went on.
	[ -e "$D/events-0/00000000000000001000.klog" ]
	[ "$(cut -f1-3 <<<"$output")" = "logs	0	0
logs	0	1000" ]
	chattr -i "$D/events-0/00000000000000000000.klog"
	run -0 klog-dump --verify "$D/events-0"
}

@test "retain: an .kafka segment and a stray empty file go like the others" {
	: >"$D/logs-0/00000000000000002000.kafka"
	touch -d '10 days ago' "$D/logs-0/00000000000000002000.kafka"
	seg "$D/logs-0" 3000 1
	run -0 klog-retain -d "$D" --max-age 7d -t logs
	[ "$(cut -f2-4 <<<"$output")" = "0	0	1000
0	1000	1000
0	2000	0
0	2000	1000" ]
	[ "$(cd "$D/logs-0" && echo *)" = "00000000000000003000.klog" ]
}

@test "retain: a second run waits for the lock, then gives up: 1" {
	lock="$D/.retain.lock"
	exec 8>"$lock"
	flock -n 8
	before=$(listing)
	run -1 --separate-stderr klog-retain -d "$D" --max-age 7d -w 0
	[ "$stderr" = "klog-retain: $lock: another klog-retain is running" ]
	[ -z "$output" ]
	run -1 klog-retain -d "$D" --max-age 7d -w 300ms
	[ "$(listing)" = "$before" ]
	# A dry run does not need the lock.
	run -0 klog-retain -n -d "$D" --max-age 7d -w 0
	[ "${#lines[@]}" -eq 4 ]
	exec 8>&-
	run -0 klog-retain -d "$D" --max-age 7d -w 0
	[ "${#lines[@]}" -eq 4 ]
}

@test "retain: a run waits while another holds the lock briefly" {
	lock="$D/.retain.lock"
	flock -o "$lock" sleep 1 &
	PIDS+=("$!")
	# Until the background flock holds it.
	n=100
	while flock -n "$lock" true && [ "$n" -gt 0 ]; do
		sleep 0.02
		n=$((n - 1))
	done
	run -0 klog-retain -d "$D" --max-age 7d -w 20s
	[ "${#lines[@]}" -eq 4 ]
	[ ! -e "$D/logs-0/00000000000000000000.klog" ]
}

@test "retain: a failed stdout is exit 74, the deletions are done" {
	run -74 --separate-stderr bash -c \
		'klog-retain -d "$1" --max-age 7d -t logs >/dev/full' _ "$D"
	[ "$stderr" = "klog-retain: stdout: No space left on device" ]
	[ ! -e "$D/logs-0/00000000000000000000.klog" ]
}

@test "retain: every flag of -h is in the man page and the completions" {
	run -0 klog-retain -h
	flags=$(grep -oE -- '(^| )--?[a-z][a-z-]*' <<<"$output" | tr -d ' ' |
		sort -u)
	[ -n "$flags" ]
	man=$(mandoc -Tascii "$KLOG_ROOT/man/klog-retain.1" | col -b)
	bash_block=$(sed -n '/^# --- klog-retain ---/,/^# --- end klog-retain ---/p' \
		"$KLOG_ROOT/completions/klog.bash")
	zsh_block=$(sed -n '/^# --- klog-retain ---/,/^# --- end klog-retain ---/p' \
		"$KLOG_ROOT/completions/_klog")
	for f in $flags; do
		grep -qF -- "$f" <<<"$man" || { echo "man: $f"; false; }
		grep -qE -- "(^|[[:space:]'])$f([[:space:]]|\$|')" <<<"$bash_block" ||
			{ echo "bash: $f"; false; }
		grep -qE -- "(^|[{,'()])$f[]+=,}[ ]" <<<"$zsh_block" ||
			{ echo "zsh: $f"; false; }
	done
	grep -q '^complete -F _klog_retain klog-retain$' \
		"$KLOG_ROOT/completions/klog.bash"
	grep -q '^klog-retain) _klog_retain "\$@" ;;$' "$KLOG_ROOT/completions/_klog"
}

@test "retain: the man page's examples" {
	run -0 klog-retain -n -d "$D" --max-age 7d
	[ "${#lines[@]}" -eq 4 ]
	run -0 --separate-stderr klog-retain -v -d "$D" --max-bytes 2K -t events
	[ "$(cut -f1-3 <<<"$output")" = "events	0	0" ]
	[[ "$stderr" == "klog-retain: deleted 1 segments, 1000 bytes, in 2 partitions" ]]
	run -0 bash -c 'klog-retain -d "$1" --max-age 36h |
	    awk -F '"'\\t'"' '"'{ b[\$1] += \$4 } END { for (t in b) print t, b[t] }'"' |
	    sort' _ "$D"
	[ "$output" = "events 2000
logs 2000" ]
}
