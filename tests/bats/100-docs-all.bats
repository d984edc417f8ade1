#!/usr/bin/env bats
# The documentation of all six tools holds together: every page lints and
# has its sections, cross-references and exit table; every flag of each
# tool's -h is in its man page and both completions, and they know no
# other; every example names only flags its tool has; the examples of
# klog(7) and klog-protocol(7) run (the tools' own pages are run by their
# suites: 013, 023, 054, 060, 070, 084); README.md links every page of doc/,
# and every link and every .md file a document names is there; and the
# command blocks of README.md, then of each doc/ page in the order the
# README links them, run in order, in one shell, as a newcomer would type
# them: against a broker and a ZooKeeper of the test's own, on free ports.

bats_require_minimum_version 1.5.0
load helpers

TOOLS="klog-serve klog-produce klog-consume klog-dump klog-retain klog-group"

setup() {
	common_setup
	unset KLOG_BROKERS KLOG_ZOOKEEPER KLOG_DATA_DIR
}

teardown() {
	common_teardown
}

# ---- flags ----

# The flags of a tool's -h: the option column of each line starting with a
# dash ("-b, --base N", "-n|--execute [-f]"), up to its description.
help_flags() {
	"$1" -h | awk '/^ +-/ {
		for (i = 1; i <= NF; i++) {
			w = $i
			gsub(/[][,]/, "", w)
			n = split(w, alt, "|")
			ok = 0
			for (k = 1; k <= n; k++)
				if (alt[k] ~ /^--?[A-Za-z0-9]/) {
					sub(/=.*/, "", alt[k])
					print alt[k]
					ok = 1
				}
			if (!ok && w !~ /^[A-Z][A-Z.:,\[\]]*$/)
				break
		}
	}' | sort -u
}

# The flags of a page's ".It Fl" lines: "Fl b , -broker Ar x" and
# "Fl f , Fl \-force" alike.
man_flags() {
	awk '/^\.It Fl / {
		gsub(/\\-/, "-")
		on = 0
		for (i = 2; i <= NF; i++) {
			if ($i == "Fl") { on = 1; continue }
			if ($i == ",") continue
			if (on && ($i ~ /^-[A-Za-z0-9][A-Za-z0-9-]*$/ ||
			    $i ~ /^[A-Za-z0-9]$/))
				print "-" $i
			else
				on = 0
		}
	}' "$1" | sort -u
}

# The words of `local opts='...'` in a tool's bash function.
bash_flags() {
	sed -n "/^_klog_$1()\$/,/^}\$/p" "$KLOG_ROOT/completions/klog.bash" |
	    sed -n "/local opts='/,/'\$/p" |
	    grep -oE -- '-{1,2}[A-Za-z0-9][A-Za-z0-9-]*' | sort -u
}

# The option names of a tool's zsh function (its _arguments specs).
zsh_flags() {
	sed -n "/^_klog_$1() {\$/,/^}\$/p" "$KLOG_ROOT/completions/_klog" |
	    grep -v '_arguments' |
	    grep -oE -- "[{,()'\" *]-{1,2}[A-Za-z0-9][A-Za-z0-9-]*" |
	    sed -E 's/^.//' | sort -u
}

@test "docs: every flag of every tool's -h is in its page and both completions, and no other" {
	local t f n bad=0
	for t in $TOOLS; do
		help_flags "$t" >"$TMP/help"
		man_flags "$KLOG_ROOT/man/$t.1" >"$TMP/man"
		bash_flags "${t#klog-}" >"$TMP/bash"
		zsh_flags "${t#klog-}" >"$TMP/zsh"
		n=$(wc -l <"$TMP/help")
		[ "$n" -ge 15 ] || { echo "$t: only $n flags in -h"; bad=1; }
		grep -qxF -- --version "$TMP/help" || { echo "$t: no --version"; bad=1; }
		for f in $(cat "$TMP/help"); do
			grep -qxF -- "$f" "$TMP/man" || { echo "$t: $f not in $t.1"; bad=1; }
			grep -qxF -- "$f" "$TMP/bash" || { echo "$t: $f not in klog.bash"; bad=1; }
			grep -qxF -- "$f" "$TMP/zsh" || { echo "$t: $f not in _klog"; bad=1; }
		done
		for f in $(cat "$TMP/man" "$TMP/bash" "$TMP/zsh"); do
			grep -qxF -- "$f" "$TMP/help" || { echo "$t: $f is documented or completed, but not in -h"; bad=1; }
		done
	done
	[ "$bad" -eq 0 ]
}

# ---- pages ----

@test "docs: every page passes mandoc -Tlint, and make lint agrees" {
	command -v mandoc >/dev/null || skip "no mandoc"
	run -0 mandoc -Tlint -Wwarning "$KLOG_ROOT"/man/*.[157]
	[ -z "$output" ]
	run -0 make -s --no-print-directory -C "$KLOG_ROOT" lint
	[ -z "$output" ]
}

# section PAGE NAME: the lines of section NAME (.Sh) of PAGE.
section() {
	awk -v sh=".Sh $2" '$0 == sh { on = 1; next } /^\.Sh / { on = 0 } on' "$1"
}

@test "docs: every page has its sections, and one per tool plus klog(7), -format(5), -protocol(7)" {
	local p t bad=0
	for t in $TOOLS; do
		[ -f "$KLOG_ROOT/man/$t.1" ] || { echo "no man/$t.1"; bad=1; }
	done
	for p in klog.7 klog-format.5 klog-protocol.7; do
		[ -f "$KLOG_ROOT/man/$p" ] || { echo "no man/$p"; bad=1; }
	done
	for p in "$KLOG_ROOT"/man/*.[157]; do
		for s in NAME DESCRIPTION EXAMPLES "SEE ALSO"; do
			grep -qx "\.Sh $s" "$p" || { echo "${p##*/}: no $s"; bad=1; }
		done
		case $p in
		*.1)
			for s in SYNOPSIS "EXIT STATUS"; do
				grep -qx "\.Sh $s" "$p" || { echo "${p##*/}: no $s"; bad=1; }
			done
			;;
		esac
		# The .Dt matches the file name, the .Os says the release.
		grep -qx "\.Dt $(basename "${p%.*}" | tr a-z A-Z) ${p##*.}" "$p" ||
			{ echo "${p##*/}: .Dt"; bad=1; }
		grep -qx '\.Os klog 0\.1\.0' "$p" || { echo "${p##*/}: .Os"; bad=1; }
	done
	[ "$bad" -eq 0 ]
}

@test "docs: every cross-reference to a klog page names one that exists, and klog(7) names them all" {
	local p x bad=0
	for p in "$KLOG_ROOT"/man/*.[157]; do
		while read -r x; do
			[ -f "$KLOG_ROOT/man/$x" ] || { echo "${p##*/}: .Xr to missing $x"; bad=1; }
		done < <(grep -oE '^\.Xr klog[a-z-]* [157]' "$p" | awk '{ print $2 "." $3 }')
		x=${p##*/}
		[ "$x" = klog.7 ] && continue
		section "$KLOG_ROOT/man/klog.7" "SEE ALSO" |
		    grep -qE "^\.Xr ${x%.*} ${x##*.}( ,)?\$" ||
			{ echo "klog.7 does not refer to $x"; bad=1; }
		# ...and every page refers back to the overview.
		section "$p" "SEE ALSO" | grep -q '^\.Xr klog 7' ||
			{ echo "$x: SEE ALSO lacks klog(7)"; bad=1; }
	done
	[ "$bad" -eq 0 ]
}

@test "docs: each page's EXIT STATUS is the whole table, and holds every status its -h names" {
	local t h m bad=0
	for p in "$KLOG_ROOT"/man/*.1 "$KLOG_ROOT/man/klog.7"; do
		m=$(section "$p" "EXIT STATUS" | awk '/^\.It [0-9]+$/ { print $2 }' | tr '\n' ' ')
		[ "$m" = "0 1 64 65 69 74 77 " ] || { echo "${p##*/}: EXIT STATUS lists $m"; bad=1; }
	done
	for t in $TOOLS; do
		h=$("$t" -h | sed -n '/^Exit status/,$p' | grep -oE '\b(0|1|6[0-9]|7[0-9])\b' | sort -un)
		[[ "$h" == 0*1*64* ]] || { echo "$t -h: exit statuses $h"; bad=1; }
		for s in $h; do
			case " 0 1 64 65 69 74 77 " in *" $s "*) ;; *) echo "$t -h: status $s"; bad=1 ;; esac
		done
	done
	[ "$bad" -eq 0 ]
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

# Every flag given to a klog tool in a command line, as "tool flag".
# Bundled short flags (-HJ) are split; values that start with a dash are
# not flags but are rare enough in examples not to matter.
used_flags() {
	tr '|;&()' '\n\n\n\n\n' | awk '{
		tool = ""
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^klog-(serve|produce|consume|dump|retain|group)$/) {
				tool = $i
				continue
			}
			if (tool == "" || $i !~ /^-[A-Za-z0-9-]/ || $i == "--")
				continue
			w = $i
			sub(/=.*/, "", w)
			if (w ~ /^--/) { print tool, w; continue }
			for (k = 2; k <= length(w); k++)
				print tool, "-" substr(w, k, 1)
		}
	}'
}

@test "docs: every example of every page, of the README and of doc/ is shell, and uses only flags its tool has" {
	local p t f bad=0
	for t in $TOOLS; do
		help_flags "$t" >"$TMP/flags.$t"
	done
	for p in "$KLOG_ROOT"/man/*.[157]; do
		examples "$p" >"$TMP/ex"
		while IFS= read -r cmd; do
			bash -n -c "$cmd" 2>/dev/null || { echo "${p##*/}: not shell: $cmd"; bad=1; }
		done <"$TMP/ex"
		cat "$TMP/ex"
	done >"$TMP/all-examples"
	doc_blocks all >>"$TMP/all-examples"
	[ "$(grep -c klog- "$TMP/all-examples")" -ge 60 ]
	while read -r t f; do
		[ -f "$TMP/flags.$t" ] || { echo "unknown tool $t"; bad=1; continue; }
		grep -qxF -- "$f" "$TMP/flags.$t" || { echo "$t has no $f"; bad=1; }
	done < <(used_flags <"$TMP/all-examples" | sort -u)
	[ "$bad" -eq 0 ]
}

# ---- running examples ----

# to_local: move the addresses and paths of documents into the test:
# ZooKeeper at zk1:2181 or 127.0.0.1:2181 to $ZKHOST, brokers on 9092 to
# $BROKER_PORT and on 9093-9095 to $P1-$P3, listening on loopback only.
to_local() {
	sed -e "s/zk1:2181/$ZKHOST/g; s/127\.0\.0\.1:2181/$ZKHOST/g" \
	    -e "s/clientPort=2181/clientPort=${ZKHOST##*:}/g" \
	    -e "s/0\.0\.0\.0:/127.0.0.1:/g" \
	    -e "s/127\.0\.0\.1:9092/127.0.0.1:$BROKER_PORT/g" \
	    -e "s/127\.0\.0\.1:9093/127.0.0.1:$P1/g" \
	    -e "s/127\.0\.0\.1:9094/127.0.0.1:$P2/g" \
	    -e "s/127\.0\.0\.1:9095/127.0.0.1:$P3/g"
}

# with_waits: around each line that starts a klog-serve in the background,
# wait until its port is free (a broker an earlier page stopped may still be
# going), then until it listens and, with -Z, until it is registered, as a
# person typing the next command would have.
with_waits() {
	awk '/^[^#]*klog-serve .*&[ \t]*(#.*)?$/ {
		port = ""; zk = ""
		if (match($0, /-l [0-9.]+:[0-9]+/))
			port = substr($0, RSTART, RLENGTH)
		sub(/.*:/, "", port)
		if (match($0, /-Z [^ ]+/))
			zk = substr($0, RSTART + 3, RLENGTH - 3)
		print "_port_free " port
		print
		print "_serve_ready " port " " zk
		next
	    }
	    { print }'
}

# The preamble of a generated script: its helpers, and set -e so that the
# first failing command ends it.
script_head() {
	cat <<-'EOF'
	_port_free() {
		local n=300
		while (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; do
			n=$((n - 1)); [ "$n" -gt 0 ] || return 1; sleep 0.1
		done
	}
	_serve_ready() {
		local port=$1 zk=$2 n=300
		until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
			n=$((n - 1)); [ "$n" -gt 0 ] || return 1; sleep 0.1
		done
		[ -n "$zk" ] || return 0
		until klog-group -Z "$zk" -H -T 5 brokers 2>/dev/null |
		    grep -q "	$port\$"; do
			n=$((n - 1)); [ "$n" -gt 0 ] || return 1; sleep 0.1
		done
	}
	_block() { printf '### %s\n' "$*"; }
	set -e
	EOF
}

# run_script FILE SECONDS: run a generated script in its own process
# group, in the current directory, output in FILE.out; whatever it left
# running is killed with its group at the end.
run_script() {
	local pid n=$(( $2 * 10 )) rc=0
	setsid bash "$1" >"$1.out" 2>&1 &
	pid=$!
	PIDS+=("$pid")
	while kill -0 "$pid" 2>/dev/null && [ "$n" -gt 0 ]; do
		sleep 0.1
		n=$((n - 1))
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM -- "-$pid" 2>/dev/null
		echo "timed out after $2 s"
		rc=1
	fi
	wait "$pid" || rc=$?
	kill -KILL -- "-$pid" 2>/dev/null || true
	[ "$rc" -eq 0 ] || { echo "exit $rc"; cat "$1.out"; }
	return "$rc"
}

# md_blocks FILE [all]: the ```sh blocks of a Markdown file in order, each
# after a "_block FILE block N, line L" marker; those after a line
# <!-- notest --> are left out unless "all" is asked for.  The mark holds
# for the next fenced block, whatever its language.
md_blocks() {
	awk -v all="${2:-}" -v name="${1#"$KLOG_ROOT"/}" '
	    /^<!-- notest -->$/ { skip = 1; next }
	    /^```/ && inb { inb = 0; skip = 0; next }
	    /^```/ { inb = 1; sh = $0 == "```sh"
		if (sh) nb++
		if (sh && (!skip || all))
			print "_block " name " block " nb ", line " NR
		next }
	    inb && sh && (!skip || all) { print }' "$1"
}

# doc_pages: README.md, then each page of doc/ in the order the README
# first links it; a page it does not link is not listed.
doc_pages() {
	echo "$KLOG_ROOT/README.md"
	grep -oE '\]\(doc/[A-Za-z0-9_.-]+\.md' "$KLOG_ROOT/README.md" |
	    sed "s|^](|$KLOG_ROOT/|" | awk '!seen[$0]++'
}

# doc_blocks [all]: md_blocks of every page doc_pages lists, in its order:
# the doc/ pages go on from the README's tour, as their reader does.
doc_blocks() {
	local f
	doc_pages | while IFS= read -r f; do
		md_blocks "$f" "${1:-}"
	done
}

@test "docs: README.md links every page of doc/, and every link and .md file named in a document is there" {
	local f x t bad=0
	doc_pages >"$TMP/pages"
	for f in "$KLOG_ROOT"/doc/*.md; do
		grep -qxF -- "$f" "$TMP/pages" ||
			{ echo "README.md does not link doc/${f##*/}"; bad=1; }
	done
	for f in "$KLOG_ROOT/README.md" "$KLOG_ROOT"/doc/*.md; do
		# Relative links, to a file or a directory.
		while IFS= read -r x; do
			t=${x%%#*}
			[ -z "$t" ] || [ -e "$(dirname "$f")/$t" ] ||
				{ echo "${f#"$KLOG_ROOT"/}: link to missing $x"; bad=1; }
		done < <(grep -oE '\]\([^)]+\)' "$f" | sed 's/^](//; s/)$//' | grep -v '://')
	done
	# Every document named as NAME.md, in the docs and the man pages, is
	# a file of the tree.
	for f in "$KLOG_ROOT/README.md" "$KLOG_ROOT"/doc/*.md "$KLOG_ROOT"/man/*.[157]; do
		while IFS= read -r x; do
			[ -n "$(cd "$KLOG_ROOT" && find . -name "${x##*/}" -not -path './build/*' | head -n 1)" ] ||
				{ echo "${f#"$KLOG_ROOT"/}: names $x, not in the tree"; bad=1; }
		done < <(grep -oE '[A-Za-z0-9_./-]+\.md\b' "$f" | sort -u)
	done
	[ "$bad" -eq 0 ]
}

@test "docs: the command blocks of README.md, then of the doc/ pages it links, run in order, as typed" {
	local rdir="$TMP/readme"
	mkdir -p "$rdir"
	cd "$rdir"
	# make run's broker, in the directory the README is followed in.
	BROKER_DATA="$rdir/klog-data" start_broker
	ZKHOST="127.0.0.1:$(free_port)"
	P1=$(free_port) P2=$(free_port) P3=$(free_port)
	[ "$(md_blocks "$KLOG_ROOT/README.md" | grep -c '^_block')" -ge 7 ]
	[ "$(doc_blocks | grep -c '^_block')" -ge 14 ]
	# The tour's pages that run: the mirror, and the cluster.
	[ "$(doc_blocks | grep -c '^_block doc/')" -ge 7 ]
	{ script_head; doc_blocks | to_local | with_waits; } >"$TMP/readme.sh"
	# Nothing of the documents' own addresses is left.
	run ! grep -nE ':(2181|909[2-5])\b' "$TMP/readme.sh"
	run_script "$TMP/readme.sh" 150
	# What the tour says happened did.
	grep -qx intact "$TMP/readme.sh.out"
	# The offset arithmetic the tour shows holds for every message.
	grep -qx true "$TMP/readme.sh.out"
	! grep -qx false "$TMP/readme.sh.out"
	[ "$(klog-consume -t nginx -o beginning -e | wc -l)" -eq 1001 ]
	[ -s tour/nginx.offset ]
	[ "$(cat tour/member-*.out | sort -u | wc -l)" -eq 1000 ]
	[ "$(cat tour/member-*.out | wc -l)" -eq 1000 ]
	[ "$(ls -d tour/broker-*/clicks-* | wc -l)" -ge 3 ]
}

# The script of a page's EXAMPLES: each command in turn, its standard
# output kept in out.N for those the page shows an output for (exp.N).
page_script() {
	awk -v dir="$2" '
	    /^\.Sh EXAMPLES/ { on = 1; next }
	    /^\.Sh / { on = 0 }
	    !on { next }
	    /^\.Bd / { inb = 1; next }
	    /^\.Ed/ { inb = 0; next }
	    !inb { next }
	    /^\$ / { n++; cmd = substr($0, 3); gsub(/\\e/, "\\", cmd)
		if (cmd ~ /&[ \t]*$/) print cmd
		else print "{ " cmd "\n} >" dir "/out." n
		next }
	    n > 0 { print > (dir "/exp." n) }' "$1"
}

@test "docs: the examples of klog(7) run and print what the page shows" {
	local i bad=0
	mkdir -p "$TMP/k7"
	cd "$TMP/k7"
	BROKER_PORT=$(free_port)
	P1=$(free_port) P2=$(free_port) P3=$(free_port)
	start_zk
	ZKHOST=$ZK
	page_script "$KLOG_ROOT/man/klog.7" "$TMP/k7" >"$TMP/k7.body"
	{ script_head; to_local <"$TMP/k7.body" | with_waits; } >"$TMP/k7.sh"
	for i in "$TMP"/k7/exp.*; do
		to_local <"$i" >"$i.local"
	done
	[ "$(ls "$TMP"/k7/exp.*.local | wc -l)" -ge 5 ]
	run_script "$TMP/k7.sh" 90
	for i in "$TMP"/k7/exp.*.local; do
		i=${i%.local}
		diff "$i.local" "${i/exp./out.}" || { echo "in example ${i##*.}"; bad=1; }
	done
	[ "$bad" -eq 0 ]
}

# The hex dump of the .Bd block number $2 (from 1) of EXAMPLES in $1.
hex_block() {
	awk -v want="$2" '/^\.Sh EXAMPLES/ { on = 1; next } /^\.Sh / { on = 0 }
	    on && /^\.Bd / { n++; inb = 1; next } /^\.Ed/ { inb = 0; next }
	    on && inb && n == want { print }' "$1" | tr -s ' \n' '  ' |
	    sed 's/^ //; s/ $//'
}

# Send the bytes of a hex dump to the broker and print the answer's.
exchange() {
	python3 - "$BROKER_PORT" "$1" <<-'PY'
	import socket, struct, sys
	s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 5)
	s.sendall(bytes.fromhex(sys.argv[2]))
	def recvn(n):
	    b = b""
	    while len(b) < n:
	        x = s.recv(n - len(b))
	        if not x:
	            raise SystemExit("connection closed")
	        b += x
	    return b
	head = recvn(4)
	body = recvn(struct.unpack(">i", head)[0])
	print(" ".join("%02x" % c for c in head + body))
	PY
}

@test "docs: the request and answer bytes of klog-protocol(7) are a live broker's" {
	local page="$KLOG_ROOT/man/klog-protocol.7" cmd
	start_broker --advertise localhost:9092 --topic events:4
	# 1: METADATA request; 2: its answer.
	run -0 exchange "$(hex_block "$page" 1)"
	[ "$output" = "$(hex_block "$page" 2)" ]
	# 3: the same from bash, as the page types it.
	examples "$page" >"$TMP/ex"
	[ "$(wc -l <"$TMP/ex")" -eq 3 ]
	cmd=$(sed "s|/dev/tcp/localhost/9092|/dev/tcp/127.0.0.1/$BROKER_PORT|" "$TMP/ex")
	run -0 bash -c "$cmd"
	[ "$(echo $output)" = "$(hex_block "$page" 2)" ]
	# 4: a PRODUCE of "hello"; 5: its answer, offset 0.
	run -0 exchange "$(hex_block "$page" 4)"
	[ "$output" = "$(hex_block "$page" 5)" ]
	run -0 klog-consume -t events -p 0 -o beginning -e
	[ "$output" = hello ]
}
