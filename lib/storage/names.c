/*
 * Names in a data directory: topics, partition directories, segment files,
 * the listers of both, and the retention rule.  See names.h.
 *
 * Choices made here:
 *  - Parsing is exact, so that a name parses only if formatting what it
 *    gave writes the same name back: 20 digits and a known suffix for a
 *    segment, no sign and no leading zero for a partition.  Two spellings
 *    of one segment or partition can then never both be taken for it.
 *  - The listers read the directory through a descriptor of its own
 *    (openat "."), so the caller's descriptor keeps its offset, and stats
 *    each name relative to it: a directory swapped for a link after the
 *    caller opened it cannot lead the stats elsewhere.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "klog/base/clock.h"
#include "klog/base/error.h"
#include "klog/storage/names.h"

#define BASE_DIGITS 20

/* ---- topics ---- */

int
klog_names_topic_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

/* A printable, bounded rendering of a rejected name for error messages. */
static void
show_name(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	for (; *s != '\0' && o + 8 < len; s++) {
		unsigned char c = (unsigned char)*s;

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
			buf[o++] = (char)c;
		else
			o += (size_t)snprintf(buf + o, len - o, "\\x%02x", c);
	}
	if (*s != '\0')
		o += (size_t)snprintf(buf + o, len - o, "...");
	buf[o] = '\0';
}

int
klog_topic_validate(const char *topic, klog_err_t *err)
{
	char shown[64];
	size_t len;

	if (topic == NULL || topic[0] == '\0')
		return klog_err_set(err, -KLOG_ETOPIC, "empty topic name");
	show_name(topic, shown, sizeof(shown));
	len = strlen(topic);
	if (len > KLOG_TOPIC_MAX)
		return klog_err_set(err, -KLOG_ETOPIC,
		    "topic \"%s\": longer than %d bytes", shown,
		    KLOG_TOPIC_MAX);
	if (strcmp(topic, ".") == 0 || strcmp(topic, "..") == 0)
		return klog_err_set(err, -KLOG_ETOPIC,
		    "topic \"%s\": not a valid name", shown);
	for (const char *p = topic; *p != '\0'; p++)
		if (!klog_names_topic_char((unsigned char)*p))
			return klog_err_set(err, -KLOG_ETOPIC,
			    "topic \"%s\": byte 0x%02x not allowed "
			    "(only A-Z a-z 0-9 . _ -)", shown,
			    (unsigned char)*p);
	return 0;
}

/* ---- partition directories ---- */

static int
fit(int n, size_t len)
{
	return n < 0 || (size_t)n >= len ? -KLOG_ETOOBIG : 0;
}

int
klog_names_dir_format(const char *topic, int partition, char *buf,
    size_t len)
{
	if (klog_topic_validate(topic, NULL) < 0)
		return -KLOG_ETOPIC;
	if (partition < 0)
		return -KLOG_EINVAL;
	return fit(snprintf(buf, len, "%s-%d", topic, partition), len);
}

int
klog_names_dir_path(const char *data_dir, const char *topic, int partition,
    char *buf, size_t len)
{
	if (klog_topic_validate(topic, NULL) < 0)
		return -KLOG_ETOPIC;
	if (partition < 0)
		return -KLOG_EINVAL;
	return fit(snprintf(buf, len, "%s/%s-%d", data_dir, topic, partition),
	    len);
}

/* A partition number written the way klog writes it: no sign, no leading
 * zero, at most INT_MAX. */
static int
parse_partition(const char *s, int *out)
{
	long long v = 0;

	if (*s == '\0' || (s[0] == '0' && s[1] != '\0'))
		return -KLOG_EINVAL;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return -KLOG_EINVAL;
		v = v * 10 + (*s - '0');
		if (v > INT_MAX)
			return -KLOG_EINVAL;
	}
	*out = (int)v;
	return 0;
}

int
klog_names_dir_parse(const char *name, char *topic, size_t topiclen,
    int *partition)
{
	const char *dash = strrchr(name, '-');
	size_t tlen;
	int p;

	if (dash == NULL || parse_partition(dash + 1, &p) < 0)
		return -KLOG_EINVAL;
	tlen = (size_t)(dash - name);
	if (tlen == 0 || tlen > KLOG_TOPIC_MAX)
		return -KLOG_ETOPIC;
	if (tlen >= topiclen)
		return -KLOG_ETOOBIG;
	memcpy(topic, name, tlen);
	topic[tlen] = '\0';
	if (klog_topic_validate(topic, NULL) < 0)
		return -KLOG_ETOPIC;
	*partition = p;
	return 0;
}

/* ---- segment files ---- */

static const char *
suffix(int kafka)
{
	return kafka ? KLOG_SEGMENT_SUFFIX_KAFKA : KLOG_SEGMENT_SUFFIX;
}

int
klog_names_segment_format(int64_t base, int kafka, char *buf, size_t len)
{
	if (base < 0)
		return -KLOG_EINVAL;
	return fit(snprintf(buf, len, "%020lld%s", (long long)base,
	    suffix(kafka)), len);
}

int
klog_names_segment_path(const char *dir, int64_t base, int kafka,
    char *buf, size_t len)
{
	if (base < 0)
		return -KLOG_EINVAL;
	return fit(snprintf(buf, len, "%s/%020lld%s", dir, (long long)base,
	    suffix(kafka)), len);
}

int
klog_names_segment_parse(const char *name, int64_t *base, int *kafka)
{
	int64_t v = 0;
	int i, overflow = 0, k;

	for (i = 0; i < BASE_DIGITS; i++) {
		if (name[i] < '0' || name[i] > '9')
			return -KLOG_EINVAL;
		if (v > (INT64_MAX - (name[i] - '0')) / 10)
			overflow = 1;
		else
			v = v * 10 + (name[i] - '0');
	}
	if (strcmp(name + i, KLOG_SEGMENT_SUFFIX) == 0)
		k = 0;
	else if (strcmp(name + i, KLOG_SEGMENT_SUFFIX_KAFKA) == 0)
		k = 1;
	else
		return -KLOG_EINVAL;
	if (overflow)
		return -KLOG_ERANGE;
	*base = v;
	if (kafka != NULL)
		*kafka = k;
	return 0;
}

/* ---- the listers ---- */

static int
cmp_seg(const void *a, const void *b)
{
	const klog_names_seg_t *x = a, *y = b;

	if (x->info.base != y->info.base)
		return x->info.base < y->info.base ? -1 : 1;
	if (x->info.size != y->info.size)
		return x->info.size < y->info.size ? -1 : 1;
	return x->kafka > y->kafka ? -1 : x->kafka < y->kafka;
}

/* A failed system call, worded for the flags (see names.h). */
static int
sys_fail(klog_err_t *err, unsigned flags, const char *what,
    const char *path)
{
	return klog_err_sys(err, (flags & KLOG_NAMES_INSPECT) ? NULL : what,
	    path);
}

/* A name that cannot be a segment's: -KLOG_ECORRUPT, or skipped (0) when
 * inspecting. */
static int
not_segment(klog_err_t *err, unsigned flags, const char *path,
    const char *why)
{
	if (flags & KLOG_NAMES_INSPECT)
		return 0;
	return klog_err_set(err, -KLOG_ECORRUPT, "%s: %s", path, why);
}

/* Stat one directory entry into a klog_names_seg_t: 1 if it is a segment,
 * 0 if it is to be left out, or an error. */
static int
seg_entry(int dfd, const char *dir, const char *name, unsigned flags,
    void *entry, klog_err_t *err)
{
	char path[PATH_MAX + NAME_MAX + 2];
	int inspect = flags & KLOG_NAMES_INSPECT;
	klog_names_seg_t *s = entry;
	struct stat st;
	int r;

	if ((r = klog_names_segment_parse(name, &s->info.base, &s->kafka)) ==
	    -KLOG_EINVAL)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (r < 0)
		return not_segment(err, flags, path, "base offset too large");
	if (fstatat(dfd, name, &st, inspect ? 0 : AT_SYMLINK_NOFOLLOW) < 0) {
		/* Listed, then removed by klog-retain before the stat. */
		if (errno == ENOENT && !inspect)
			return 0;
		return sys_fail(err, flags, "stat", path);
	}
	if (!S_ISREG(st.st_mode))
		return not_segment(err, flags, path, "not a regular file");
	if (st.st_size > INT64_MAX - s->info.base)
		return not_segment(err, flags, path,
		    "segment ends past the largest offset");
	s->info.size = st.st_size;
	s->info.mtime_ms = klog_clock_ts_ms(&st.st_mtim);
	return 1;
}

DIR *
klog_names_reopen_dir(int dfd)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d;

	if (fd < 0)
		return NULL;
	if ((d = fdopendir(fd)) == NULL)
		close(fd);
	return d;
}

/* What a listing keeps of each entry, and in which order. */
struct listing {
	size_t size;            /* of one entry */
	/* Read name into entry: 1 to keep it, 0 to leave it out, or an
	 * error. */
	int (*entry)(int dfd, const char *dir, const char *name,
	    unsigned flags, void *entry, klog_err_t *err);
	int (*cmp)(const void *, const void *);
};

/*
 * The one directory walk: dfd's directory through a descriptor of its own,
 * one readdir and one entry() per name, the kept entries sorted into *out
 * (NULL when none, else the caller's to free()).
 */
static int
list_dir(int dfd, const char *dir, unsigned flags, const struct listing *l,
    void **out, size_t *n, klog_err_t *err)
{
	char *list = NULL, *grown;
	struct dirent *de;
	size_t cap = 0;
	DIR *d;
	int rc = 0;

	*out = NULL;
	*n = 0;
	if ((d = klog_names_reopen_dir(dfd)) == NULL)
		return sys_fail(err, flags, "opendir", dir);
	while (rc == 0) {
		/* Reset each time: entry() may leave errno set. */
		errno = 0;
		if ((de = readdir(d)) == NULL) {
			if (errno != 0)
				rc = sys_fail(err, flags, "readdir", dir);
			break;
		}
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			if ((grown = realloc(list, cap * l->size)) == NULL) {
				rc = klog_err_set(err, -KLOG_ENOMEM,
				    "%s: out of memory", dir);
				break;
			}
			list = grown;
		}
		rc = l->entry(dfd, dir, de->d_name, flags, list + *n * l->size,
		    err);
		if (rc > 0) {
			(*n)++;
			rc = 0;
		}
	}
	closedir(d);
	if (rc < 0 || *n == 0) {
		free(list);
		*n = 0;
		return rc;
	}
	qsort(list, *n, l->size, l->cmp);
	*out = list;
	return 0;
}

int
klog_names_segments(int dfd, const char *dir, unsigned flags,
    klog_names_seg_t **out, size_t *n, klog_err_t *err)
{
	static const struct listing segs = { sizeof(klog_names_seg_t),
	    seg_entry, cmp_seg };
	void *list;
	int rc = list_dir(dfd, dir, flags, &segs, &list, n, err);

	*out = list;
	return rc;
}

static int
cmp_part(const void *a, const void *b)
{
	const klog_names_part_t *x = a, *y = b;
	int c = strcmp(x->topic, y->topic);

	if (c != 0)
		return c;
	return (x->partition > y->partition) - (x->partition < y->partition);
}

/* "<valid topic>-<n>", a directory itself: a link is not followed out of
 * the data directory. */
static int
part_entry(int dfd, const char *dir, const char *name, unsigned flags,
    void *entry, klog_err_t *err)
{
	char path[PATH_MAX + NAME_MAX + 2];
	klog_names_part_t *p = entry;
	struct stat st;

	if (klog_names_dir_parse(name, p->topic, sizeof(p->topic),
	    &p->partition) < 0)
		return 0;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		/* Listed, then its topic deleted before the stat. */
		if (errno == ENOENT)
			return 0;
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		return sys_fail(err, flags, "stat", path);
	}
	return S_ISDIR(st.st_mode);
}

int
klog_names_parts(int dfd, const char *dir, klog_names_part_t **out,
    size_t *n, klog_err_t *err)
{
	static const struct listing parts = { sizeof(klog_names_part_t),
	    part_entry, cmp_part };
	void *list;
	int rc = list_dir(dfd, dir, 0, &parts, &list, n, err);

	*out = list;
	return rc;
}
