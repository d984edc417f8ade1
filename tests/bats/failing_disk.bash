# A disk that loses written data: ext4 on a loop device whose backing file
# is a sparse 200 MiB image in a small tmpfs.  write() only fills the page
# cache, so it succeeds; once the tmpfs is full, write-back of blocks the
# image has never held fails, and fsync() says so (ENOSPC on Linux 6.18;
# syncfs may say EIO).  A later fsync() of the same file then returns 0
# although the data never reached the disk ("fsyncgate").  Blocks the image
# already holds (journal, inode tables, bitmaps) can still be rewritten, so
# ext4 stays read-write (but see failing_disk_sync).  After a remount, the
# lost part of a file reads as zeros up to its full size.
#
# Load after helpers.bash (needs $TMP and `skip`).  Needs root, loop devices
# and mount; skips otherwise.  In teardown, kill the test's processes first
# (a busy ext4 cannot be unmounted), then call failing_disk_teardown.
# Sets FD_TMPFS, FD_IMG, FD_LOOP, FD_MNT.

# _fd_skip REASON: undo what setup did so far, whether or not the caller's
# teardown calls failing_disk_teardown.
_fd_skip() {
	failing_disk_teardown
	skip "failing disk: $1"
}

# failing_disk_setup SIZE_MB: the ext4 at $FD_MNT, its image in a tmpfs of
# SIZE_MB MiB.  About 5 MiB of that goes to the file system's metadata;
# data write-back fails after about SIZE_MB - 5 MiB.
failing_disk_setup() {
	local cmd
	# Everything lives under $TMP, which teardown removes.
	[ -d "${TMP:-}" ] || { echo "failing disk: no \$TMP" >&2; return 1; }
	export FD_TMPFS=$TMP/fd-tmpfs FD_MNT=$TMP/fd-mnt FD_LOOP=
	FD_OLDKB=
	export FD_IMG=$FD_TMPFS/disk.img
	[ "$(id -u)" -eq 0 ] || skip "failing disk: needs root"
	for cmd in losetup mkfs.ext4 fsck.ext4 mountpoint truncate; do
		command -v "$cmd" >/dev/null || skip "failing disk: no $cmd"
	done
	mkdir -p "$FD_TMPFS" "$FD_MNT"
	mount -t tmpfs -o "size=${1:-50}m" fd-tmpfs "$FD_TMPFS" 2>/dev/null ||
		_fd_skip "cannot mount a tmpfs here"
	truncate -s 200M "$FD_IMG"
	# Buffered loop I/O works on any tmpfs (O_DIRECT on tmpfs is recent);
	# direct-io=on behaved the same on Linux 6.18.
	FD_LOOP=$(losetup --find --show --direct-io=off "$FD_IMG" 2>/dev/null) ||
		_fd_skip "no loop device here"
	# One page per request: the loop driver reports a request that the full
	# tmpfs took only in part as a success, so without this the fsync that
	# crosses the limit may return 0 and lose its tail unreported.  The
	# setting outlives losetup -d: teardown puts the old one back.
	cmd=/sys/block/${FD_LOOP#/dev/}/queue/max_sectors_kb
	if ! FD_OLDKB=$(cat "$cmd") || ! echo 4 >"$cmd"; then
		_fd_skip "cannot limit $FD_LOOP to 4 KiB requests"
	fi
	# mkfs on the loop device, not on the image: on a file, mke2fs "zeroes"
	# the journal and inode tables by punching holes, and a journal or
	# metadata write into a hole once the tmpfs is full aborts the journal
	# (ext4 goes emergency_ro).  Through the loop device it writes real
	# zeros, which take their tmpfs pages now.  4 KiB blocks keep a file in
	# the 4 extents of its inode (no extent-tree block to allocate later);
	# 1024 inodes and a 4 MiB journal leave the tmpfs to the data.
	mkfs.ext4 -q -F -b 4096 -N 1024 -J size=4 \
		-E lazy_journal_init=0,lazy_itable_init=0,nodiscard \
		"$FD_LOOP" >/dev/null 2>&1 || _fd_skip "mkfs.ext4 failed on $FD_LOOP"
	# Should the zeros still have become holes (4564 KiB used on Linux 6.18),
	# ext4 would go read-only instead of losing data: do not pretend.
	[ "$(du -k "$FD_IMG" | cut -f1)" -ge 4096 ] ||
		_fd_skip "mkfs left the journal sparse in the tmpfs"
	mount -t ext4 "$FD_LOOP" "$FD_MNT" 2>/dev/null ||
		_fd_skip "cannot mount an ext4 on a loop device here"
}

# failing_disk_sync: write back what is dirty while there is room, so that
# blocks allocated since setup (new directories' blocks, extent-tree
# blocks) own their tmpfs pages.  Otherwise their write-back some 30 s
# later (vm.dirty_expire_centisecs) fails on the full tmpfs, and the next
# metadata change aborts the journal.  Call it after creating directories
# and files, before the writes that are meant to be lost.
failing_disk_sync() {
	sync -f "$FD_MNT"
}

# failing_disk_broken: whether ext4 gave up (aborted its journal), which
# the recipe is meant to avoid.  /proc/mounts may say "emergency_ro", or
# still just "rw" (errors=continue), so the error count is checked too.
failing_disk_broken() {
	awk -v m="$FD_MNT" '$2 == m && $4 ~ /(^|,)(ro|emergency_ro)(,|$)/ { f = 1 }
		END { exit !f }' /proc/mounts ||
		[ "$(cat "/sys/fs/ext4/${FD_LOOP#/dev/}/errors_count")" != 0 ]
}

# failing_disk_heal: room for the whole image, so every write-back still
# pending (and every later one) lands.
failing_disk_heal() {
	mount -o remount,size=256m "$FD_TMPFS"
}

# failing_disk_remount: what a reboot would find.  Unmounting drops the page
# cache, so the data read afterwards is what reached the image; fsck first,
# as after a crash.  Exit status 1 of fsck means "errors fixed": fine here.
failing_disk_remount() {
	local n=50 rc=0
	# A process that has just been killed may hold the file system a while.
	until umount "$FD_MNT" 2>/dev/null; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || { echo "failing disk: $FD_MNT busy" >&2; return 1; }
		sleep 0.1
	done
	fsck.ext4 -fy "$FD_LOOP" >"$TMP/fd-fsck.log" 2>&1 || rc=$?
	[ "$rc" -le 1 ] || { cat "$TMP/fd-fsck.log" >&2; return 1; }
	mount -t ext4 "$FD_LOOP" "$FD_MNT"
}

# failing_disk_teardown: undo whatever setup got to; safe to call twice.
failing_disk_teardown() {
	local dev
	[ -n "${FD_TMPFS:-}" ] || return 0
	if mountpoint -q "$FD_MNT"; then
		# Lazily if still busy: it goes once its last user does.
		umount "$FD_MNT" 2>/dev/null || umount -l "$FD_MNT"
	fi
	# Only loop devices backed by our image: a stale $FD_LOOP may have been
	# reused by someone else since.
	if [ -e "$FD_IMG" ]; then
		for dev in $(losetup -l -n -O NAME -j "$FD_IMG" 2>/dev/null); do
			[ -z "${FD_OLDKB:-}" ] || echo "$FD_OLDKB" \
				>"/sys/block/${dev#/dev/}/queue/max_sectors_kb" || :
			losetup -d "$dev" || :
		done
	fi
	if mountpoint -q "$FD_TMPFS"; then
		umount "$FD_TMPFS" 2>/dev/null || umount -l "$FD_TMPFS"
	fi
	FD_LOOP='' FD_OLDKB=''
	return 0
}
