/* klog-consume --offset-file's offset file; see offsetfile.h. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "klog/base/buf.h"
#include "klog/base/parse.h"
#include "klog/client/offsetfile.h"

#define HEADER "# klog-consume offsets: topic, partition, next offset"

static int
cmp_entry(const void *a, const void *b)
{
	const klog_offsetfile_entry_t *x = a, *y = b;
	int c = strcmp(x->topic, y->topic);

	if (c != 0)
		return c;
	return (x->partition > y->partition) - (x->partition < y->partition);
}

/* Insert a copy of line[0..len) as note at. */
static int
note_insert(klog_offsetfile_t *f, size_t at, const char *line, size_t len)
{
	char *copy;

	if (klog_buf_grow((void **)&f->notes, &f->notes_cap,
	    (f->nnotes + 1) * sizeof(*f->notes)) < 0)
		return -KLOG_ENOMEM;
	if ((copy = strndup(line, len)) == NULL)
		return -KLOG_ENOMEM;
	memmove(f->notes + at + 1, f->notes + at,
	    (f->nnotes - at) * sizeof(*f->notes));
	f->notes[at] = copy;
	f->nnotes++;
	return 0;
}

/* A '#' line kept as a note; the header is written by every save. */
static int
take_note(klog_offsetfile_t *f, const char *p)
{
	size_t len = strcspn(p, "\r\n");

	if (len == strlen(HEADER) && memcmp(p, HEADER, len) == 0)
		return 0;
	return note_insert(f, f->nnotes, p, len);
}

/* Parse "topic partition offset" (blank-separated) into *e. */
static int
parse_line(char *line, klog_offsetfile_entry_t *e, const char **why)
{
	char *save = NULL, *topic, *part, *off;
	int64_t v;

	topic = strtok_r(line, " \t\r\n", &save);
	part = strtok_r(NULL, " \t\r\n", &save);
	off = strtok_r(NULL, " \t\r\n", &save);
	if (off == NULL || strtok_r(NULL, " \t\r\n", &save) != NULL) {
		*why = "expected: topic, partition, offset";
		return -1;
	}
	if (klog_topic_validate(topic, NULL) < 0) {
		*why = "invalid topic name";
		return -1;
	}
	snprintf(e->topic, sizeof(e->topic), "%s", topic);
	if (klog_parse_i64(part, 0, INT32_MAX, &v, why) < 0)
		return -1;
	e->partition = (int32_t)v;
	if (klog_parse_i64(off, 0, INT64_MAX, &e->offset, why) < 0)
		return -1;
	return 0;
}

int
klog_offsetfile_load(const char *path, klog_offsetfile_t *f, klog_err_t *err)
{
	klog_offsetfile_entry_t e;
	char *line = NULL, *p;
	const char *why = NULL;
	size_t cap = 0, lineno = 0;
	FILE *fp;
	int rc = 0;

	memset(f, 0, sizeof(*f));
	if ((f->path = strdup(path)) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	if ((fp = fopen(path, "r")) == NULL) {
		if (errno == ENOENT)
			return 0;
		return klog_err_set(err, klog_errno_code(errno), "%s: %s",
		    path, strerror(errno));
	}
	while (getline(&line, &cap, fp) >= 0) {
		lineno++;
		p = line + strspn(line, " \t\r\n");
		if (*p == '\0')
			continue;
		if (*p == '#') {
			if ((rc = take_note(f, p)) < 0) {
				klog_err_set(err, rc, "out of memory");
				break;
			}
			continue;
		}
		if (parse_line(p, &e, &why) < 0) {
			rc = klog_err_set(err, -KLOG_ECORRUPT, "%s:%zu: %s",
			    path, lineno, why);
			break;
		}
		if ((rc = klog_offsetfile_set(f, e.topic, e.partition,
		    e.offset)) < 0)
			break;
	}
	if (rc == 0 && ferror(fp))
		rc = klog_err_set(err, -KLOG_EIO, "%s: read error", path);
	free(line);
	fclose(fp);
	return rc;
}

void
klog_offsetfile_free(klog_offsetfile_t *f)
{
	free(f->path);
	free(f->entries);
	for (size_t i = 0; i < f->nnotes; i++)
		free(f->notes[i]);
	free(f->notes);
	memset(f, 0, sizeof(*f));
}

int
klog_offsetfile_get(const klog_offsetfile_t *f, const char *topic,
    int32_t partition, int64_t *offset)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->entries[i].partition == partition &&
		    strcmp(f->entries[i].topic, topic) == 0) {
			*offset = f->entries[i].offset;
			return 1;
		}
	return 0;
}

int
klog_offsetfile_set(klog_offsetfile_t *f, const char *topic,
    int32_t partition, int64_t offset)
{
	klog_offsetfile_entry_t *e;
	size_t ncap;

	if (strlen(topic) > KLOG_TOPIC_MAX)
		return -KLOG_ETOPIC;
	for (size_t i = 0; i < f->n; i++)
		if (f->entries[i].partition == partition &&
		    strcmp(f->entries[i].topic, topic) == 0) {
			f->entries[i].offset = offset;
			return 0;
		}
	if (f->n == f->cap) {
		ncap = f->cap ? f->cap * 2 : 16;
		if ((e = realloc(f->entries, ncap * sizeof(*e))) == NULL)
			return -KLOG_ENOMEM;
		f->entries = e;
		f->cap = ncap;
	}
	e = &f->entries[f->n++];
	snprintf(e->topic, sizeof(e->topic), "%s", topic);
	e->partition = partition;
	e->offset = offset;
	qsort(f->entries, f->n, sizeof(*e), cmp_entry);
	return 0;
}

int
klog_offsetfile_notes_set(klog_offsetfile_t *f, const char *prefix,
    const char *text)
{
	size_t plen = strlen(prefix), at = SIZE_MAX, i = 0, len;
	int rc;

	while (i < f->nnotes)
		if (strncmp(f->notes[i], prefix, plen) == 0) {
			free(f->notes[i]);
			memmove(f->notes + i, f->notes + i + 1,
			    (--f->nnotes - i) * sizeof(*f->notes));
			if (at == SIZE_MAX)
				at = i;
		} else {
			i++;
		}
	if (at == SIZE_MAX)
		at = f->nnotes;
	for (; *text != '\0'; text += len + 1, at++) {
		len = strcspn(text, "\n");
		if ((rc = note_insert(f, at, text, len)) < 0)
			return rc;
		if (text[len] == '\0')
			break;
	}
	return 0;
}

static int
fsync_dir(const char *path)
{
	char *copy = strdup(path);
	int fd, rc = 0;

	if (copy == NULL)
		return -1;
	if ((fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) <
	    0 || fsync(fd) < 0)
		rc = -1;
	if (fd >= 0)
		close(fd);
	free(copy);
	return rc;
}

int
klog_offsetfile_save(const klog_offsetfile_t *f, klog_err_t *err)
{
	size_t tlen = strlen(f->path) + 32;
	char tmp[tlen];
	FILE *fp;
	int ok;

	/* A temporary name of this process's own: mirrors of one group
	 * share a file (klog_bookmark_settle()). */
	snprintf(tmp, tlen, "%s.tmp.%ld", f->path, (long)getpid());
	if ((fp = fopen(tmp, "we")) == NULL)
		return klog_err_set(err, klog_errno_code(errno), "%s: %s", tmp,
		    strerror(errno));
	fprintf(fp, HEADER "\n");
	for (size_t i = 0; i < f->nnotes; i++)
		fprintf(fp, "%s\n", f->notes[i]);
	for (size_t i = 0; i < f->n; i++)
		fprintf(fp, "%s\t%d\t%lld\n", f->entries[i].topic,
		    (int)f->entries[i].partition,
		    (long long)f->entries[i].offset);
	ok = fflush(fp) == 0 && !ferror(fp) && fsync(fileno(fp)) == 0;
	if (fclose(fp) != 0)
		ok = 0;
	if (!ok || rename(tmp, f->path) < 0 || fsync_dir(f->path) < 0) {
		int e = errno;

		unlink(tmp);
		return klog_err_set(err, klog_errno_code(e), "%s: %s",
		    f->path, strerror(e));
	}
	return 0;
}
