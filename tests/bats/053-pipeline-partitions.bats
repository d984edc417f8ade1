#!/usr/bin/env bats
# Several partitions: round-robin batches, keys (-K), -p, merged and
# selected consumption, and concurrent producers.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	common_setup
	start_broker --partitions 4
}

teardown() {
	common_teardown
}

# in_order FILE: the numbers in FILE increase strictly.
in_order() {
	awk 'NR > 1 && $1 <= prev { exit 1 } { prev = $1 }' "$1"
}

@test "partitions: batches go round robin; each partition keeps the order" {
	seq 1 20000 >"$TMP/in"
	klog-produce -t rr --batch 100 <"$TMP/in"
	run -0 klog-consume -L -t rr
	[ "${#lines[@]}" -eq 4 ]
	klog-consume -t rr -o beginning -e -f '%p %s\n' >"$TMP/out"
	cmp <(cut -d' ' -f2 "$TMP/out" | sort -n) "$TMP/in"
	for p in 0 1 2 3; do
		awk -v p=$p '$1 == p { print $2 }' "$TMP/out" >"$TMP/p$p"
		[ "$(wc -l <"$TMP/p$p")" -ge 4000 ]
		in_order "$TMP/p$p"
	done
	# -p reads one partition; two -p read two.
	cmp <(klog-consume -t rr -p 2 -o beginning -e) "$TMP/p2"
	[ "$(klog-consume -t rr -p 1 -p 3 -o beginning -e | wc -l)" -eq \
		$(( $(wc -l <"$TMP/p1") + $(wc -l <"$TMP/p3") )) ]
}

@test "partitions: -K: the same key always goes to the same partition" {
	for i in $(seq 1 2000); do
		printf 'user%d\tevent %d\n' $(( i % 13 )) "$i"
	done >"$TMP/in"
	klog-produce -t keyed -K '\t' <"$TMP/in"
	klog-consume -t keyed -o beginning -e -f '%p %s\n' >"$TMP/out"
	[ "$(wc -l <"$TMP/out")" -eq 2000 ]
	# The record is kept whole, key included.
	grep -q '^[0-3] user5	event 5$' "$TMP/out"
	# One partition per key...
	[ "$(cut -f1 "$TMP/out" | sort -u | awk '{print $2}' | sort | uniq -d |
		wc -l)" -eq 0 ]
	# ...the documented one: FNV-1a 32-bit of the key, mod 4.
	want=$(python3 -c '
h = 2166136261
for b in b"user5":
    h = ((h ^ b) * 16777619) % 2**32
print(h % 4)')
	grep -q "^$want user5	" "$TMP/out"
	# And in order within the key.
	grep '	' "$TMP/out" | awk -F'\t' '$1 ~ / user7$/ { print $2 }' |
		sed 's/event //' >"$TMP/u7"
	in_order "$TMP/u7"
	# --strip-key publishes what follows the key; same partitions.
	klog-produce -t stripped -K '\t' --strip-key <"$TMP/in"
	klog-consume -t stripped -o beginning -e -f '%p %s\n' >"$TMP/s"
	grep -q "^$want event 5$" "$TMP/s"
}

@test "partitions: -p sends everything to one partition; a missing one is refused" {
	seq 1 100 | klog-produce -t one -p 2
	run -0 klog-consume -t one -p 2 -o beginning -e
	[ "${#lines[@]}" -eq 100 ]
	run -0 klog-consume -t one -p 0 -o beginning -e
	[ -z "$output" ]
	run -1 --separate-stderr klog-produce -t one -p 9 <<<"x"
	[ "$stderr" = 'klog-produce: topic "one" has 4 partitions, no partition 9' ]
}

@test "partitions: concurrent producers: every record, each producer's order kept per partition" {
	local prods=() pid
	echo seed | klog-produce -t c -p 0
	for j in 1 2 3 4; do
		seq 1 20000 | sed "s/^/p$j /" | klog-produce -t c --batch 50 &
		prods+=($!)
		PIDS+=($!)
	done
	for pid in "${prods[@]}"; do
		wait "$pid"
	done
	klog-consume -t c -o beginning -e -f '%p %s\n' | grep -v seed >"$TMP/out"
	[ "$(wc -l <"$TMP/out")" -eq 80000 ]
	for j in 1 2 3 4; do
		cmp <(awk -v j="p$j" '$2 == j { print $3 }' "$TMP/out" | sort -n) \
			<(seq 1 20000)
		for p in 0 1 2 3; do
			awk -v j="p$j" -v p=$p '$1 == p && $2 == j { print $3 }' \
				"$TMP/out" >"$TMP/o"
			in_order "$TMP/o"
		done
	done
}
