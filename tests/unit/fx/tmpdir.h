/*
 * A temporary directory for a unit test: made under /tmp from the test's
 * name, removed with everything in it.  Header-only, like fakebroker.h.
 */
#ifndef KLOG_TEST_TMPDIR_H
#define KLOG_TEST_TMPDIR_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

static inline int
tmpdir_rm_one(const char *path, const struct stat *st, int flag,
    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	(void)remove(path);
	return 0;
}

/* dir (size bytes) becomes a new directory /tmp/klog-test-NAME.XXXXXX;
 * NULL if it cannot be made. */
static inline char *
tmpdir_make(char *dir, size_t size, const char *name)
{
	snprintf(dir, size, "/tmp/klog-test-%s.XXXXXX", name);
	return mkdtemp(dir);
}

/* Remove dir and everything below it, as far as possible. */
static inline void
tmpdir_remove(const char *dir)
{
	nftw(dir, tmpdir_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
