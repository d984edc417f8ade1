/* A mirror's bookmark over an offset file; see bookmark.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "klog/client/bookmark.h"
#include "klog/client/offsetfile.h"

struct mark {
	uint64_t seq;
	int32_t partition;
	int64_t offset;
};

/* Send numbers [first, end) acknowledged, not yet joined to through. */
struct span {
	uint64_t first, end;
};

struct klog_bookmark {
	char *path;
	char topic[KLOG_TOPIC_MAX + 1];   /* "" until the first note */
	struct mark *q;                   /* q[head..tail): oldest first */
	size_t head, tail, cap;
	uint64_t through;                 /* 1..through acknowledged */
	uint64_t lost;                    /* the least never to be, or 0 */
	struct span *spans;               /* acknowledged past a gap */
	size_t nspans, spans_cap;
	char *notes;                      /* as saved last; NULL: never */
};

int
klog_bookmark_open(const char *path, klog_bookmark_t **out, klog_err_t *err)
{
	klog_offsetfile_t f;
	klog_bookmark_t *b;
	int rc;

	/* A file that cannot be read now cannot be merged into later. */
	rc = klog_offsetfile_load(path, &f, err);
	klog_offsetfile_free(&f);
	if (rc < 0)
		return rc;
	if ((b = calloc(1, sizeof(*b))) == NULL ||
	    (b->path = strdup(path)) == NULL) {
		free(b);
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	}
	*out = b;
	return 0;
}

int
klog_bookmark_note(klog_bookmark_t *b, uint64_t seq, const char *topic,
    int32_t partition, int64_t offset, klog_err_t *err)
{
	struct mark *q;
	size_t ncap;

	if (b->topic[0] == '\0')
		snprintf(b->topic, sizeof(b->topic), "%s", topic);
	else if (strcmp(b->topic, topic) != 0)
		return klog_err_set(err, -KLOG_EINVAL, "topic \"%s\", but the "
		    "records before were of \"%s\"", topic, b->topic);
	if (b->head > 0 && b->tail == b->cap) {
		memmove(b->q, b->q + b->head, (b->tail - b->head) *
		    sizeof(*b->q));
		b->tail -= b->head;
		b->head = 0;
	}
	if (b->tail == b->cap) {
		ncap = b->cap ? 2 * b->cap : 1024;
		if ((q = realloc(b->q, ncap * sizeof(*q))) == NULL)
			return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
		b->q = q;
		b->cap = ncap;
	}
	b->q[b->tail++] = (struct mark){ seq, partition, offset };
	return 0;
}

int
klog_bookmark_done(klog_bookmark_t *b, uint64_t first, uint32_t records,
    int ok)
{
	struct span *v;
	size_t ncap, i;

	if (!ok) {
		if (b->lost == 0 || first < b->lost)
			b->lost = first;
		return 0;
	}
	if (b->nspans == b->spans_cap) {
		ncap = b->spans_cap ? 2 * b->spans_cap : 16;
		if ((v = realloc(b->spans, ncap * sizeof(*v))) == NULL)
			return -KLOG_ENOMEM;
		b->spans = v;
		b->spans_cap = ncap;
	}
	b->spans[b->nspans++] = (struct span){ first, first + records };
	/* Join every span that now follows through, in any order. */
	for (i = 0; i < b->nspans; )
		if (b->spans[i].first == b->through + 1) {
			b->through = b->spans[i].end - 1;
			b->spans[i] = b->spans[--b->nspans];
			i = 0;
		} else {
			i++;
		}
	return 0;
}

uint64_t
klog_bookmark_upto(const klog_bookmark_t *b)
{
	return b->lost != 0 && b->lost <= b->through ? b->lost - 1 :
	    b->through;
}

int
klog_bookmark_settle(klog_bookmark_t *b, uint64_t upto, const char *prefix,
    const char *notes, klog_err_t *err)
{
	klog_offsetfile_t f;
	size_t end = b->head;
	char *copy = NULL;
	int rc;

	while (end < b->tail && b->q[end].seq <= upto)
		end++;
	if (prefix != NULL && (b->notes == NULL ||
	    strcmp(b->notes, notes) != 0) && (copy = strdup(notes)) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	if (end == b->head && copy == NULL)
		return 0;
	/* Read again: another mirror may have moved its partitions since. */
	if ((rc = klog_offsetfile_load(b->path, &f, err)) < 0)
		goto out;
	for (size_t i = b->head; i < end; i++)
		if ((rc = klog_offsetfile_set(&f, b->topic, b->q[i].partition,
		    b->q[i].offset)) < 0) {
			klog_err_set(err, rc, "out of memory");
			goto out;
		}
	if (prefix != NULL && (rc = klog_offsetfile_notes_set(&f, prefix,
	    notes)) < 0) {
		klog_err_set(err, rc, "out of memory");
		goto out;
	}
	if ((rc = klog_offsetfile_save(&f, err)) < 0)
		goto out;
	b->head = end;
	if (copy != NULL) {
		free(b->notes);
		b->notes = copy;
		copy = NULL;
	}
out:
	free(copy);
	klog_offsetfile_free(&f);
	return rc;
}

void
klog_bookmark_close(klog_bookmark_t *b)
{
	if (b == NULL)
		return;
	free(b->path);
	free(b->q);
	free(b->spans);
	free(b->notes);
	free(b);
}
