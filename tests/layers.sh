#!/bin/sh
# The library's layering, as doc/modules.md draws it.  Checks:
#  - ranks: lib/F/NAME.c and include/klog/F/NAME.h include only
#    "klog/G/X.h" of their own folder or of a folder of lower rank;
#  - private headers: a lib/F/*.h is included only from lib/F (no "../"),
#    never from include/;
#  - cycles among modules (F/NAME) through includes, and through calls: the
#    undefined symbols of each object (nm -u) matched to the object that
#    defines them (nm --defined-only), so calls that pass through a private
#    header or a bare declaration are seen too; a call also keeps the ranks;
#  - size: no file of lib/, include/ or cmd/ over the line limit, no
#    function of cmd/ over 80 lines (a main parses, calls and reports);
#  - names: every lib/*/NAME.c has a basename of its own (the archive keeps
#    members by basename) and a row in doc/modules.md (when the tree has one);
#  - citations: every *.md that lib/, include/, cmd/ or man/ names exists.
# Prints each problem on a line of its own, then a one-line summary; exits
# 0 when there is none, 1 when there is one, 64 on misuse.
#
#   tests/layers.sh [--max-lines N] [--objects DIR] [ROOT]
#
# ROOT is the tree to check (default: the one holding this script); the
# limit is N, else $KLOG_MAX_LINES, else 1000; DIR holds the objects as
# DIR/F/NAME.o (default ROOT/build/lib; "none" skips the call check).
set -u

usage() {
	echo "usage: tests/layers.sh [--max-lines N] [--objects DIR] [ROOT]"
}

# Folder ranks: a folder may use folders of lower rank only.  Folders of
# one rank never use each other.
RANKS='base 1
storage 2
net 3
proto 3
zk 3
auth 3
client 4
core 4
group 5
kafka 5
broker 6
cluster 7'

max=${KLOG_MAX_LINES:-1000}
root=
objs=
while [ $# -gt 0 ]; do
	case $1 in
	--max-lines | --objects)
		[ $# -ge 2 ] || { usage >&2; exit 64; }
		[ "$1" = --objects ] && objs=$2 || max=$2
		shift 2
		;;
	--max-lines=*)
		max=${1#--max-lines=}
		shift
		;;
	--objects=*)
		objs=${1#--objects=}
		shift
		;;
	-h | --help)
		usage
		exit 0
		;;
	-*)
		echo "layers.sh: unknown option $1" >&2
		usage >&2
		exit 64
		;;
	*)
		[ -z "$root" ] || { usage >&2; exit 64; }
		root=$1
		shift
		;;
	esac
done
case $max in
'' | *[!0-9]*)
	echo "layers.sh: --max-lines $max: not a number of lines" >&2
	exit 64
	;;
esac
if [ -z "$root" ]; then
	root=$(cd "$(dirname "$0")/.." && pwd) || exit 64
fi
if [ ! -d "$root/lib" ]; then
	echo "layers.sh: $root/lib: not a directory" >&2
	exit 64
fi
[ -n "$objs" ] || objs=$root/build/lib

inc='^[[:space:]]*#[[:space:]]*include[[:space:]]*"klog/\([a-z]*/[A-Za-z0-9_]*\)\.h".*'
priv='^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*'

# Records for awk: "rank F R", "size FILE LINES", "node F/M",
# "inc F/M G/X FILE" per include, "call F/M G/X SYMBOL" per call,
# "priv FILE HEADER" per quoted non-klog include.
records=$(
	printf '%s\n' "$RANKS" | sed 's/^/rank /'
	for f in "$root"/lib/*/*.[ch] "$root"/include/klog/*/*.h \
	    "$root"/cmd/*.c "$root"/cmd/*/*.[ch]; do
		[ -f "$f" ] || continue
		rel=${f#"$root"/}
		echo "size $rel $(wc -l <"$f")"
		case $rel in
		cmd/*) continue ;;
		esac
		m=${rel#lib/}
		m=${m#include/klog/}
		m=${m%.*}
		case $rel in
		lib/*.h) sed -n "s|$priv|priv $rel \\1|p" "$f" | grep -v ' klog/' ;;
		*.h) echo "node $m" ;;
		*.c) echo "node $m"
		     sed -n "s|$priv|priv $rel \\1|p" "$f" | grep -v ' klog/' ;;
		esac
		sed -n "s|$inc|inc $m \\1 $rel|p" "$f"
	done
	if [ "$objs" != none ]; then
		for o in "$root"/lib/*/*.c; do
			m=${o#"$root"/lib/}
			m=${m%.c}
			[ -f "$objs/$m.o" ] || { echo "missing $objs/$m.o"; continue; }
			nm --defined-only -g "$objs/$m.o" |
			    awk -v m="$m" 'NF == 3 { print "def", m, $3 }'
			nm -u "$objs/$m.o" | awk -v m="$m" '{ print "use", m, $2 }'
		done
	fi
) || { echo "layers.sh: cannot read the sources under $root" >&2; exit 64; }

# Citations: every *.md a source or a man page names is in the tree.
for f in $(grep -Eoh '[A-Za-z0-9_./-]*[A-Za-z][A-Za-z0-9_-]{2,}\.md([^A-Za-z0-9_.]|$)' "$root"/lib/*/*.[ch] \
    "$root"/include/klog/*/*.h "$root"/cmd/*.c "$root"/cmd/*/*.[ch] \
    "$root"/man/* 2>/dev/null | sed 's/[^d]$//' | sort -u); do
	[ -e "$root/$f" ] || [ -e "$root/doc/${f##*/}" ] ||
	    [ -e "$root/${f##*/}" ] || records="$records
cite $f"
done

# Functions of cmd/: none over 80 lines, from the line naming it (at
# column 0, as every definition here is written) to its closing brace.
records="$records
$(awk 'FNR == 1 { name = "" }
/^[A-Za-z_][A-Za-z0-9_]*\(/ { name = $0; sub(/\(.*/, "", name); from = FNR }
/^}/ && name != "" {
	if (FNR - from + 1 > 80)
		printf "long %s:%d %s %d\n", FILENAME, from, name, FNR - from + 1
	name = ""
}' "$root"/cmd/*.c "$root"/cmd/*/*.c | sed "s|$root/||")"

unmapped=0
if [ -f "$root/doc/modules.md" ]; then
	for f in "$root"/lib/*/*.c; do
		m=${f##*/}
		m=${m%.c}
		# A row of its own: the module first, or among the first cell's.
		grep -Eq "^\| (\`[a-z]+\` / )*\`$m\`( / \`[a-z]+\`)* \|" \
		    "$root/doc/modules.md" && continue
		echo "layers: $m: not in doc/modules.md"
		unmapped=$((unmapped + 1))
	done
fi
printf '%s\n' "$records" | awk -v max="$max" -v unmapped="$unmapped" '
function folder(m) { return substr(m, 1, index(m, "/") - 1) }
function base(m) { return substr(m, index(m, "/") + 1) }
function problem(s) { print "layers: " s; bad++ }
$1 == "rank" { rank[$2] = $3; next }
$1 == "long" { problem(sprintf("%s: %s() is %d lines, over 80", $2, $3, $4)); next }
$1 == "cite" { problem("cites " $2 ", which is not in the tree"); next }
$1 == "missing" { problem($2 ": no object (build first, or --objects none)"); next }
$1 == "size" {
	if ($3 + 0 > max + 0) {
		problem(sprintf("%s: %d lines, over %d", $2, $3, max))
		over++
	}
	next
}
$1 == "node" {
	node($2)
	if (!(folder($2) in rank))
		problem($2 ": folder " folder($2) " has no rank")
	next
}
$1 == "priv" {
	# A private header: beside its includer in lib/F, never elsewhere.
	if ($2 ~ /^include\// || $3 ~ /\//)
		problem($2 ": includes \"" $3 "\": a private header is included only from its own folder")
	next
}
$1 == "inc" && $2 != $3 {
	ranked($2, $3, $4 " includes klog/" $3 ".h")
	edge("inc", $2, $3)
	next
}
$1 == "def" { def[$3] = $2; next }
$1 == "use" { use[++nuse] = $2 " " $3; next }

function node(m,    b) {
	if (!(m in seen)) {
		seen[m] = 1
		nodes[++nnodes] = m
	}
	b = base(m)
	if ((b in basename) && basename[b] != m)
		problem(m ": same basename as " basename[b] " (the archive keeps one)")
	basename[b] = m
}
function ranked(a, b, what,    fa, fb) {
	fa = folder(a)
	fb = folder(b)
	if (fa == fb || !(fa in rank) || !(fb in rank))
		return
	if (rank[fb] >= rank[fa]) {
		problem(sprintf("%s: %s (rank %d) is not below %s (rank %d)",
		    what, fb, rank[fb], fa, rank[fa]))
		ranks++
	}
}
function edge(kind, a, b) {
	if ((kind, a, b) in has)
		return
	has[kind, a, b] = 1
	out[kind, a, ++nout[kind, a]] = b
}

# Depth first; a dependency met again while still on the path closes a
# cycle, which is printed from that dependency round to itself.
function visit(kind, m,    i, x, j, s) {
	state[kind, m] = 1
	path[++depth] = m
	for (i = 1; i <= nout[kind, m]; i++) {
		x = out[kind, m, i]
		if (state[kind, x] == 1) {
			for (j = depth; path[j] != x; j--)
				;
			s = x
			for (j++; j <= depth; j++)
				s = s " -> " path[j]
			problem(sprintf("%s cycle: %s -> %s", kind, s, x))
			cycles++
		} else if (state[kind, x] == 0) {
			visit(kind, x)
		}
	}
	depth--
	state[kind, m] = 2
}

END {
	for (i = 1; i <= nuse; i++) {
		split(use[i], u, " ")
		if (!(u[2] in def) || def[u[2]] == u[1])
			continue
		if (!((u[1], def[u[2]]) in called)) {
			called[u[1], def[u[2]]] = 1
			ranked(u[1], def[u[2]], "lib/" u[1] ".c calls " u[2] "() of lib/" def[u[2]] ".c")
		}
		edge("call", u[1], def[u[2]])
	}
	for (i = 1; i <= nnodes; i++) {
		if (state["inc", nodes[i]] == 0)
			visit("inc", nodes[i])
		if (state["call", nodes[i]] == 0)
			visit("call", nodes[i])
	}
	printf "layers: %d modules, %s over %d lines, %s, %s, %s: %s\n",
	    nnodes, over ? over " file" (over > 1 ? "s" : "") : "no file", max,
	    ranks ? ranks " rank violation" (ranks > 1 ? "s" : "") : "ranks kept",
	    cycles ? cycles " cycle" (cycles > 1 ? "s" : "") : "no cycle",
	    unmapped ? unmapped " not in the map" : "all in the map",
	    bad || unmapped ? "FAIL" : "ok"
	exit bad || unmapped ? 1 : 0
}'
