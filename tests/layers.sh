#!/bin/sh
# The library's layering: no lib/*.c over a line limit, no cycle among
# the library's modules, and every module in the map for newcomers
# (doc/modules.md, when the tree has one).  Module M's dependencies are the "klog/X.h"
# includes of lib/M.c and include/klog/M.h together; a cycle is M reaching
# M again through them.  Prints each problem on a line of its own, then a
# one-line summary; exits 0 when there is none, 1 when there is one, 64 on
# misuse.
#
#   tests/layers.sh [--max-lines N] [ROOT]
#
# ROOT is the tree to check (default: the one holding this script); the
# limit is N, else $KLOG_MAX_LINES, else 1200.
set -u

usage() {
	echo "usage: tests/layers.sh [--max-lines N] [ROOT]"
}

max=${KLOG_MAX_LINES:-1200}
root=
while [ $# -gt 0 ]; do
	case $1 in
	--max-lines)
		[ $# -ge 2 ] || { usage >&2; exit 64; }
		max=$2
		shift 2
		;;
	--max-lines=*)
		max=${1#--max-lines=}
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

inc='^[[:space:]]*#[[:space:]]*include[[:space:]]*"klog/\([A-Za-z0-9_]*\)\.h".*'

# One "size FILE LINES" record per lib/*.c, one "node M" per module and one
# "edge M X" per include, for awk to judge.
records=$(
	for f in "$root"/lib/*.c "$root"/include/klog/*.h; do
		[ -f "$f" ] || continue
		m=${f##*/}
		m=${m%.*}
		echo "node $m"
		case $f in
		*.c) echo "size lib/${f##*/} $(wc -l <"$f")" ;;
		esac
		sed -n "s|$inc|edge $m \\1|p" "$f" || exit 1
	done
) || { echo "layers.sh: cannot read the sources under $root" >&2; exit 64; }
unmapped=0
if [ -f "$root/doc/modules.md" ]; then
	for f in "$root"/lib/*.c; do
		m=${f##*/}
		m=${m%.c}
		# A row of its own: the module first, or among the first cell's.
		grep -Eq "^\| (\`[a-z]+\` / )*\`$m\`( / \`[a-z]+\`)* \|" \
		    "$root/doc/modules.md" && continue
		echo "layers: $m: not in doc/modules.md"
		unmapped=$((unmapped + 1))
	done
fi
printf '%s\n' "$records" | LC_ALL=C sort -u | awk -v max="$max" \
    -v unmapped="$unmapped" '
$1 == "size" {
	if ($3 + 0 > max + 0) {
		printf "layers: %s: %d line%s, over %d\n", $2, $3,
		    $3 == 1 ? "" : "s", max
		over++
	}
	next
}
function node(m) {
	if (!(m in seen)) {
		seen[m] = 1
		nodes[++nnodes] = m
	}
}
$1 == "node" {
	node($2)
	next
}
$1 == "edge" && $2 != $3 {
	node($2)
	node($3)
	if (!(($2, $3) in has)) {
		has[$2, $3] = 1
		out[$2, ++nout[$2]] = $3
	}
}

# Depth first; a dependency met again while still on the path closes a
# cycle, which is printed from that dependency round to itself.
function visit(m,    i, x, j, s) {
	state[m] = 1
	path[++depth] = m
	for (i = 1; i <= nout[m]; i++) {
		x = out[m, i]
		if (state[x] == 1) {
			for (j = depth; path[j] != x; j--)
				;
			s = x
			for (j++; j <= depth; j++)
				s = s " -> " path[j]
			printf "layers: cycle: %s -> %s\n", s, x
			cycles++
		} else if (state[x] == 0) {
			visit(x)
		}
	}
	depth--
	state[m] = 2
}

END {
	for (i = 1; i <= nnodes; i++)
		if (state[nodes[i]] == 0)
			visit(nodes[i])
	printf "layers: %d modules, %s over %d lines, %s, %s: %s\n",
	    nnodes, over ? over " file" (over > 1 ? "s" : "") : "no file", max,
	    cycles ? cycles " cycle" (cycles > 1 ? "s" : "") : "no cycle",
	    unmapped ? unmapped " not in the map" : "all in the map",
	    over || cycles || unmapped ? "FAIL" : "ok"
	exit over || cycles || unmapped ? 1 : 0
}'
