#!/usr/bin/env bats
# Topic names that would make paths: '/', '..', '.', NUL, blanks, non-ASCII,
# over-long.  Every tool refuses them (exit 64), the broker answers them
# INVALID_TOPIC over the raw protocol in every request, and nothing is ever
# created outside the data directory, nor inside it but for valid topics.
# Partition directories that are links lead nowhere either.

bats_require_minimum_version 1.5.0
load helpers

DRIVERS="$KLOG_ROOT/tests/drivers"

setup() {
	common_setup
	# Deep enough that "../../x" still lands inside $TMP, where find
	# can see it.
	BROKER_DATA="$TMP/a/b/data"
	mkdir -p "$TMP/a/b"
}

teardown() {
	common_teardown
}

# Everything under $TMP but the broker's log and a partition's recovery
# point, which the flusher writes in its own time (a valid partition's
# directory shows it is there).
tree() {
	(cd "$TMP" && find . -mindepth 1 ! -name broker.log \
		! -name 'recovery-point' ! -name 'recovery-point.tmp' | sort)
}

hostile_names() {
	printf '%s\n' 'a/b' '..' '.' '../x' '../../x' '/etc/passwd' 'a b' \
		"$(printf 'caf\303\251')" "$(printf 'tab\there')" \
		"$(head -c 250 /dev/zero | tr '\0' x)" 'x-0/..' '*'
}

@test "paths: klog-produce, klog-consume, klog-retain and klog-serve refuse every bad name" {
	start_broker
	local before name
	before=$(tree)
	while IFS= read -r name; do
		run -64 --separate-stderr klog-produce -t "$name" <<<"x"
		[[ "$stderr" == "klog-produce: "*"topic"* ]]
		run -64 --separate-stderr klog-consume -t "$name" -e
		[[ "$stderr" == "klog-consume: "*"topic"* ]]
		run -64 --separate-stderr klog-retain -d "$BROKER_DATA" \
			-t "$name" -n
		run -64 --separate-stderr klog-serve -d "$TMP/other" \
			-l "127.0.0.1:$(free_port)" --topic "$name:1"
		printf 'topic = %s\n' "$name" >"$TMP/c.conf"
		run -64 --separate-stderr klog-serve -c "$TMP/c.conf" \
			-d "$TMP/other" -l "127.0.0.1:$(free_port)"
	done < <(hostile_names)
	rm "$TMP/c.conf"
	[ "$(tree)" = "$before" ]
	# The longest valid name works, with a partition number of 4 digits.
	name=$(head -c 249 /dev/zero | tr '\0' y)
	echo long | klog-produce -t "$name"
	run -0 klog-consume -t "$name" -o beginning -e
	[ "$output" = long ]
	[ -d "$BROKER_DATA/$name-0" ]
}

@test "paths: an offset file naming a bad topic is refused (65)" {
	start_broker
	echo x | klog-produce -t ok
	printf '../x\t0\t5\n' >"$TMP/off"
	run -65 --separate-stderr klog-consume -t ok --offset-file "$TMP/off" -e
	[ "$stderr" = "klog-consume: $TMP/off:1: invalid topic name" ]
}

@test "paths: bad names over the raw protocol: INVALID_TOPIC everywhere, nothing created" {
	start_broker
	echo x | klog-produce -t good
	local before
	before=$(tree)
	python3 - "$BROKER_PORT" "$DRIVERS" <<-'EOF'
	import socket, struct, sys
	sys.path.insert(0, sys.argv[2])
	import klogwire as kw
	names = [b"../evil", b"../../evil", b"a/b", b"/tmp/evil", b"a\0b",
	         b"evil\0", b"caf\xc3\xa9", b"\xff\xfe", b"x" * 250, b".", b"..",
	         b"", b"a b", b"a\nb", b"good/../good", b"good\0"]
	s = kw.connect(int(sys.argv[1]))
	mset = kw.message_set([b"payload"])
	corr = 0
	def ask(frame):
	    global corr
	    s.sendall(frame)
	    c, err, body = kw.read_response(s)
	    assert (c, err) == (corr, 0), (c, corr, err)
	    return body
	for name in names:
	    for part in (0, -1, 5):
	        corr += 1
	        r = kw.parse_produce_response(ask(kw.produce(corr, [(name, part, mset)], acks=1)))
	        assert [x[2] for x in r] == [6], (name, r)
	    corr += 1
	    r = kw.parse_fetch_response(ask(kw.fetch(corr, [(name, 0, 0, 4096)])))
	    assert r[0][2] == 6 and r[0][5] == b"", (name, r)
	    corr += 1
	    body = ask(kw.offsets(corr, [(name, 0, -1, 1)]))
	    rd = kw.Reader(body)
	    assert rd.take(">i") == 1
	    rd.raw(rd.take(">h"))
	    assert rd.take(">ih") == (0, 6), name
	    corr += 1
	    body = ask(kw.metadata(corr, [name]))
	    rd = kw.Reader(body)
	    rd.take(">i")
	    for _ in range(rd.take(">i")):
	        rd.take(">i"); rd.string(); rd.take(">i")
	    assert rd.take(">i") == 1
	    err = rd.take(">h")
	    rd.raw(rd.take(">h"))
	    assert (err,) + rd.take(">ii") == (6, 0, -1), name
	# One request with a good part between bad ones: only the good one lands.
	corr += 1
	r = kw.parse_produce_response(ask(kw.produce(corr, [
	    (b"../evil", 0, mset), (b"good", 0, mset), (b"a/b", 0, mset)], acks=-1)))
	assert [x[2] for x in r] == [6, 0, 6], r
	EOF
	# The good part is the only thing that changed: one more message.
	[ "$(tree)" = "$before" ]
	run -0 klog-consume -t good -o beginning -e
	[ "$output" = "x
payload" ]
	! grep -q 'created topic "[^g]' "$TMP/broker.log"
}

@test "paths: partition directories that are links are never followed" {
	mkdir -p "$BROKER_DATA" "$TMP/outside-0"
	ln -s ../../../outside-0 "$BROKER_DATA/link-0"
	ln -s /nonexistent "$BROKER_DATA/dangling-0"
	mkfifo "$BROKER_DATA/fifo-0"
	start_broker
	# Not taken for topics at startup.
	run -0 klog-consume -L
	[ -z "$output" ]
	# Not written through when a producer names them.
	run -1 --separate-stderr klog-produce -t link <<<"x"
	run -1 --separate-stderr klog-produce -t dangling <<<"x"
	run -1 --separate-stderr klog-produce -t fifo <<<"x"
	grep -q 'creating topic "link": open .*/link-0: Not a directory' "$TMP/broker.log"
	[ -z "$(ls -A "$TMP/outside-0")" ]
	[ ! -e /nonexistent ]
	# The broker still serves real topics.
	echo y | klog-produce -t real
	run -0 klog-consume -t real -o beginning -e
	[ "$output" = y ]
	# klog-retain and klog-dump leave them alone too.
	run -0 klog-retain -d "$BROKER_DATA" --max-bytes 0
	[ -L "$BROKER_DATA/link-0" ] && [ -L "$BROKER_DATA/dangling-0" ]
	[ -z "$(ls -A "$TMP/outside-0")" ]
}

@test "paths: klog-dump reads directories with odd names and creates nothing" {
	start_broker
	seq 1 5 | klog-produce -t good -a all
	kill -TERM "$BROKER_PID"
	wait "$BROKER_PID"
	local d odd
	for odd in '..-0' 'a b-0' "$(printf 'new\nline-0')" \
		"$(printf 'bad\377utf8-0')" '-rf-0'; do
		d="$TMP/dumps/$odd"
		mkdir -p "$d"
		cp "$BROKER_DATA/good-0/00000000000000000000.klog" "$d/"
	done
	local before
	before=$(tree)
	for d in "$TMP/dumps"/*; do
		run -0 klog-dump --verify -- "$d"
		klog-dump -J -- "$d" | jq -e . >/dev/null
		[ "$(klog-dump -J -- "$d" | wc -l)" -eq 5 ]
	done
	[ "$(tree)" = "$before" ]
}
