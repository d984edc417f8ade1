#!/usr/bin/env bats
# make install puts every tool, the library and its headers, every man page
# and both completions under DESTDIR/PREFIX, each usable from there; make
# uninstall takes every one of them away again.  The tree is not rebuilt
# here (-o all): the suites run after make.

bats_require_minimum_version 1.5.0
load helpers

TOOLS="klog-serve klog-produce klog-consume klog-dump klog-retain klog-group"

setup() {
	common_setup
	DEST="$TMP/dest"
}

teardown() {
	common_teardown
}

install_to() {
	make -s -C "$KLOG_ROOT" -o all "$@" DESTDIR="$DEST" PREFIX=/usr
}

# Every file install is expected to put under DEST, one per line.
expected_files() {
	local t f
	for t in $TOOLS; do
		echo "usr/bin/$t"
		echo "usr/share/bash-completion/completions/$t"
	done
	echo usr/lib/libklog.a
	for f in "$KLOG_ROOT"/include/klog/*/*.h; do
		echo "usr/include/${f#"$KLOG_ROOT"/include/}"
	done
	for f in "$KLOG_ROOT"/man/*.[157]; do
		echo "usr/share/man/man${f##*.}/${f##*/}"
	done
	echo usr/share/zsh/site-functions/_klog
}

@test "install: every file lands under DESTDIR/PREFIX, and nothing else" {
	run -0 install_to install
	expected_files | sort >"$TMP/want"
	(cd "$DEST" && find . -type f | sed 's|^\./||' | sort) >"$TMP/got"
	diff "$TMP/want" "$TMP/got"
	[ "$(wc -l <"$TMP/want")" -ge 40 ]
	for t in $TOOLS; do
		[ -x "$DEST/usr/bin/$t" ]
		cmp "$KLOG_ROOT/completions/klog.bash" \
			"$DEST/usr/share/bash-completion/completions/$t"
	done
	cmp "$KLOG_ROOT/completions/_klog" "$DEST/usr/share/zsh/site-functions/_klog"
}

@test "install: the installed tools run, and say their version" {
	run -0 install_to install
	for t in $TOOLS; do
		run -0 "$DEST/usr/bin/$t" --version
		[ "$output" = "$t 0.1.0" ]
	done
}

@test "install: every installed man page renders, with man -l and mandoc" {
	local p name
	run -0 install_to install
	for p in "$DEST"/usr/share/man/man?/*; do
		name=$(basename "$p")
		name=${name%.*}
		if command -v man >/dev/null; then
			run -0 --separate-stderr env MANWIDTH=80 MANPAGER=cat man -l "$p"
			[[ "$output" == *NAME* ]] || { echo "man -l $p: $output"; false; }
			[[ "$output" == *"$name"* ]]
		fi
		run -0 mandoc -Tmarkdown "$p"
		[[ "$output" == *"# SEE ALSO"* ]]
	done
	# man finds them by name under the installed tree.
	command -v man >/dev/null || skip "no man"
	run -0 env MANPAGER=cat man -M "$DEST/usr/share/man" 7 klog
	[[ "$output" == *"Cluster layout"* ]]
}

@test "install: a program builds against the installed library and headers" {
	run -0 install_to install
	cat >"$TMP/use.c" <<-'EOF'
	#include <stdio.h>
	#include <klog/base/error.h>
	#include <klog/base/parse.h>

	int
	main(void)
	{
		const char *why;
		int64_t v;

		if (klog_parse_size("4K", 0, 1 << 20, &v, &why) < 0)
			return 1;
		printf("%lld %s\n", (long long)v, klog_strerror(-KLOG_ECORRUPT));
		return 0;
	}
	EOF
	run -0 cc -std=c11 -Wall -Werror -I"$DEST/usr/include" -o "$TMP/use" \
		"$TMP/use.c" -L"$DEST/usr/lib" -lklog -lzookeeper_mt -lz -pthread
	run -0 "$TMP/use"
	[[ "$output" == "4096 "* ]]
}

@test "install: the installed completions register every tool" {
	run -0 install_to install
	run -0 bash -c 'source "$1/usr/share/bash-completion/completions/klog-dump"
		complete -p klog-serve klog-produce klog-consume klog-dump \
			klog-retain klog-group' _ "$DEST"
	[ "${#lines[@]}" -eq 6 ]
	command -v zsh >/dev/null || skip "no zsh"
	run -0 zsh -n "$DEST/usr/share/zsh/site-functions/_klog"
}

@test "uninstall: every installed file goes, even with DESTDIR" {
	run -0 install_to install
	run -0 install_to uninstall
	run -0 find "$DEST" -type f
	[ -z "$output" ]
	[ ! -e "$DEST/usr/include/klog" ]
	# A second uninstall finds nothing to do and is no error.
	run -0 install_to uninstall
}

@test "uninstall: leaves files it did not install" {
	run -0 install_to install
	echo mine >"$DEST/usr/bin/other-tool"
	echo mine >"$DEST/usr/include/klog/local.h"
	run -0 install_to uninstall
	[ -f "$DEST/usr/bin/other-tool" ]
	[ -f "$DEST/usr/include/klog/local.h" ]
	[ ! -e "$DEST/usr/include/klog/storage/format.h" ]
	[ ! -e "$DEST/usr/include/klog/storage" ]
}
