/*
 * fsync(2), interposed: the library is linked into the test program, so
 * its calls come here.  The next fsync_fails calls fail with EIO, as after
 * a failed write-back (klog-serve(1), "A failing disk"); then the system
 * call again, which may return 0 for the same file, as Linux's does.
 * Atomic: the flusher thread calls it.  Header-only, like tmpdir.h; one
 * test program includes it once.
 */
#ifndef KLOG_TEST_FAILSYNC_H
#define KLOG_TEST_FAILSYNC_H

#include <sys/syscall.h>

#include <errno.h>
#include <unistd.h>

static _Atomic int fsync_fails;

int
fsync(int fd)
{
	if (fsync_fails > 0) {
		fsync_fails--;
		errno = EIO;
		return -1;
	}
	return (int)syscall(SYS_fsync, fd);
}

#endif
