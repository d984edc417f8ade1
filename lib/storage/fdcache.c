/*
 * The descriptor cache: owned entries that nobody pins sit on an idle list,
 * most recently used at the head; evictions take from the tail.  Pinned
 * entries are off the list, so an eviction never walks past them.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "klog/base/error.h"
#include "klog/storage/fdcache.h"

struct klog_fdcache {
	pthread_mutex_t mu;
	atomic_int refs;
	size_t max;
	size_t open;                 /* owned entries with a descriptor */
	klog_fdcache_entry_t *head, *tail;  /* idle owned entries */
};

int
klog_fdcache_new(size_t max, klog_fdcache_t **out)
{
	klog_fdcache_t *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (c == NULL)
		return -KLOG_ENOMEM;
	pthread_mutex_init(&c->mu, NULL);
	atomic_init(&c->refs, 1);
	c->max = max;
	*out = c;
	return 0;
}

void
klog_fdcache_ref(klog_fdcache_t *c)
{
	atomic_fetch_add(&c->refs, 1);
}

void
klog_fdcache_unref(klog_fdcache_t *c)
{
	if (c == NULL || atomic_fetch_sub(&c->refs, 1) != 1)
		return;
	pthread_mutex_destroy(&c->mu);
	free(c);
}

size_t
klog_fdcache_open_count(klog_fdcache_t *c)
{
	size_t n;

	pthread_mutex_lock(&c->mu);
	n = c->open;
	pthread_mutex_unlock(&c->mu);
	return n;
}

void
klog_fdcache_entry_init(klog_fdcache_entry_t *e, int fd)
{
	e->fd = fd;
	e->pins = 0;
	e->owned = 0;
	e->prev = e->next = NULL;
}

/* ---- the idle list; under the lock ---- */

static void
idle_push(klog_fdcache_t *c, klog_fdcache_entry_t *e)
{
	e->prev = NULL;
	e->next = c->head;
	if (c->head != NULL)
		c->head->prev = e;
	else
		c->tail = e;
	c->head = e;
}

static void
idle_remove(klog_fdcache_t *c, klog_fdcache_entry_t *e)
{
	if (e->prev != NULL)
		e->prev->next = e->next;
	else
		c->head = e->next;
	if (e->next != NULL)
		e->next->prev = e->prev;
	else
		c->tail = e->prev;
	e->prev = e->next = NULL;
}

static void
evict(klog_fdcache_t *c)
{
	klog_fdcache_entry_t *e;

	while (c->max > 0 && c->open > c->max && (e = c->tail) != NULL) {
		idle_remove(c, e);
		close(e->fd);
		e->fd = -1;
		e->owned = 0;
		c->open--;
	}
}

/* ---- entries ---- */

int
klog_fdcache_pin(klog_fdcache_t *c, klog_fdcache_entry_t *e,
    const char *path)
{
	int fd;

	pthread_mutex_lock(&c->mu);
	if (e->fd < 0) {
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			int saved = errno;

			pthread_mutex_unlock(&c->mu);
			errno = saved;
			return klog_errno_code(saved);
		}
		/* Readahead off, like the log's own (log.c says why). */
		(void)posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
		e->fd = fd;
		e->owned = 1;
		c->open++;
	} else if (e->owned && e->pins == 0) {
		idle_remove(c, e);
	}
	e->pins++;
	fd = e->fd;
	evict(c);
	pthread_mutex_unlock(&c->mu);
	return fd;
}

void
klog_fdcache_repin(klog_fdcache_t *c, klog_fdcache_entry_t *e)
{
	pthread_mutex_lock(&c->mu);
	e->pins++;
	pthread_mutex_unlock(&c->mu);
}

void
klog_fdcache_unpin(klog_fdcache_t *c, klog_fdcache_entry_t *e)
{
	pthread_mutex_lock(&c->mu);
	if (--e->pins == 0 && e->owned) {
		idle_push(c, e);
		evict(c);
	}
	pthread_mutex_unlock(&c->mu);
}

void
klog_fdcache_adopt(klog_fdcache_t *c, klog_fdcache_entry_t *e)
{
	pthread_mutex_lock(&c->mu);
	if (!e->owned && e->fd >= 0) {
		e->owned = 1;
		c->open++;
		if (e->pins == 0)
			idle_push(c, e);
		evict(c);
	}
	pthread_mutex_unlock(&c->mu);
}

void
klog_fdcache_drop(klog_fdcache_t *c, klog_fdcache_entry_t *e)
{
	pthread_mutex_lock(&c->mu);
	if (e->owned) {
		if (e->pins == 0)
			idle_remove(c, e);
		c->open--;
	}
	pthread_mutex_unlock(&c->mu);
	if (e->fd >= 0)
		close(e->fd);
	e->fd = -1;
	e->owned = 0;
}
