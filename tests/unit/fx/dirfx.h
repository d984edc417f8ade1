/*
 * A cmocka state that is a temporary directory, for the tests whose only
 * state is the directory they work in: setup makes it (under /tmp, named
 * after DIRFX_NAME, which the test defines before it includes this), and
 * teardown removes it with everything in it.  Header-only, like tmpdir.h.
 */
#ifndef KLOG_TEST_DIRFX_H
#define KLOG_TEST_DIRFX_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "fx/tmpdir.h"

#ifndef DIRFX_NAME
#error "define DIRFX_NAME, the test directory's name, before fx/dirfx.h"
#endif

struct fixture {
	char dir[64];
};

static inline int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_non_null(tmpdir_make(f->dir, sizeof(f->dir), DIRFX_NAME));
	*state = f;
	return 0;
}

static inline int
teardown(void **state)
{
	struct fixture *f = *state;

	tmpdir_remove(f->dir);
	free(f);
	return 0;
}

#endif
