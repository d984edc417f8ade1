/*
 * Kafka groups' committed offsets on disk (koffsets.h).
 *
 *   DATA/.kafka-offsets/
 *     my-group            one file per group, its id escaped:
 *     a%2Fb               [A-Za-z0-9_-] and '.' (not first) kept,
 *     %2E%2E%2Fx          every other byte %XX
 *     .my-group.tmp       a save in progress (never a group: a group's
 *                         name never starts with '.')
 *
 *   klog-kafka-offsets 1                   the version line
 *   <topic> <partition> <offset> <meta>    one line a partition, sorted;
 *   nginx 0 123456 -                       meta in hex, "-" when empty
 *   nginx 1 98765 6f6b
 *
 * A group's entries are an array sorted by (topic, partition), searched
 * by halves; groups are a list, as a broker has few.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "klog/base/parse.h"
#include "klog/kafka/koffsets.h"
#include "klog/storage/names.h"

#define VERSION_LINE "klog-kafka-offsets 1"
#define GROUP_MAX 200     /* bytes of a group id */
#define NAME_MAX_ESC 250  /* its file name; ".NAME.tmp" fits NAME_MAX */

struct entry {
	char topic[KLOG_TOPIC_MAX + 1];
	int32_t partition;
	int64_t offset;
	char *meta;           /* owned; NULL when empty */
	uint16_t meta_len;
};

struct kgroup_offsets {
	struct kgroup_offsets *next;
	char *id;
	uint16_t id_len;
	char name[NAME_MAX_ESC + 1];
	struct entry *e;      /* sorted by topic, then partition */
	size_t n, cap;
};

struct klog_koffsets {
	char *dir;            /* DATA/.kafka-offsets */
	int dfd;
	struct kgroup_offsets *groups;
};

/* ---- names ---- */

static int
keep_char(int c, size_t i)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '_' || c == '-' ||
	    (c == '.' && i > 0);
}

/* group's file name into out (NAME_MAX_ESC + 1 bytes); -KLOG_EINVAL for
 * an empty id, one over GROUP_MAX bytes or one that escapes too long. */
static int
name_escape(const char *p, size_t n, char *out)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	if (n == 0 || n > GROUP_MAX)
		return -KLOG_EINVAL;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		if (o + (keep_char(c, i) ? 1 : 3) > NAME_MAX_ESC)
			return -KLOG_EINVAL;
		if (keep_char(c, i)) {
			out[o++] = (char)c;
		} else {
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = '\0';
	return 0;
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* A file name back to its group id (GROUP_MAX + 1 bytes at out); only a
 * name that escaping the id gives back again counts, so one group has
 * one file. */
static int
name_unescape(const char *name, char *out, size_t *len)
{
	char again[NAME_MAX_ESC + 1];
	size_t n = 0;

	for (const char *s = name; *s != '\0'; n++) {
		if (n >= GROUP_MAX)
			return -KLOG_EINVAL;
		if (*s == '%') {
			int hi = hexval(s[1]), lo = hi < 0 ? -1 : hexval(s[2]);

			if (lo < 0)
				return -KLOG_EINVAL;
			out[n] = (char)(hi << 4 | lo);
			s += 3;
		} else {
			out[n] = *s++;
		}
	}
	if (name_escape(out, n, again) < 0 || strcmp(again, name) != 0)
		return -KLOG_EINVAL;
	*len = n;
	return 0;
}

/* ---- entries ---- */

static struct kgroup_offsets *
group_find(const klog_koffsets_t *o, klog_str_t id)
{
	for (struct kgroup_offsets *g = o->groups; g != NULL; g = g->next)
		if (g->id_len == id.len && id.len > 0 &&
		    memcmp(g->id, id.p, id.len) == 0)
			return g;
	return NULL;
}

static struct kgroup_offsets *
group_add(klog_koffsets_t *o, const char *id, size_t len, const char *name)
{
	struct kgroup_offsets *g = calloc(1, sizeof(*g));

	if (g == NULL || (g->id = malloc(len + 1)) == NULL) {
		free(g);
		return NULL;
	}
	memcpy(g->id, id, len);
	g->id[len] = '\0';
	g->id_len = (uint16_t)len;
	snprintf(g->name, sizeof(g->name), "%s", name);
	g->next = o->groups;
	o->groups = g;
	return g;
}

static int
cmp_key(const struct entry *e, const char *topic, int32_t partition)
{
	int c = strcmp(e->topic, topic);

	if (c != 0)
		return c;
	return (e->partition > partition) - (e->partition < partition);
}

/* The index of topic/partition, or where it would go (*found 0). */
static size_t
entry_search(const struct kgroup_offsets *g, const char *topic,
    int32_t partition, int *found)
{
	size_t lo = 0, hi = g->n;

	*found = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp_key(&g->e[mid], topic, partition);

		if (c == 0) {
			*found = 1;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Record an entry; topic is already valid.  dup: 1 if it was there. */
static int
entry_put(struct kgroup_offsets *g, const char *topic, int32_t partition,
    int64_t offset, const char *meta, size_t meta_len, int *dup)
{
	char *copy = NULL;
	int found;
	size_t i = entry_search(g, topic, partition, &found);
	struct entry *e;

	if (meta_len > 0) {
		if ((copy = malloc(meta_len)) == NULL)
			return -KLOG_ENOMEM;
		memcpy(copy, meta, meta_len);
	}
	if (!found && g->n == g->cap) {
		size_t ncap = g->cap ? g->cap * 2 : 16;

		if ((e = realloc(g->e, ncap * sizeof(*e))) == NULL) {
			free(copy);
			return -KLOG_ENOMEM;
		}
		g->e = e;
		g->cap = ncap;
	}
	if (!found) {
		memmove(&g->e[i + 1], &g->e[i], (g->n - i) * sizeof(*e));
		g->n++;
		memset(&g->e[i], 0, sizeof(*e));
		snprintf(g->e[i].topic, sizeof(g->e[i].topic), "%s", topic);
		g->e[i].partition = partition;
	}
	e = &g->e[i];
	free(e->meta);
	e->meta = copy;
	e->meta_len = (uint16_t)meta_len;
	e->offset = offset;
	if (dup != NULL)
		*dup = found;
	return 0;
}

/* ---- loading ---- */

/* One line: "topic partition offset meta" into the group. */
static int
parse_line(struct kgroup_offsets *g, char *line, const char **why)
{
	char *save = NULL, *topic, *part, *off, *meta;
	char bytes[KLOG_KOFFSETS_MAX_METADATA];
	size_t mlen = 0;
	int64_t p, v;
	int dup, rc;

	topic = strtok_r(line, " \n", &save);
	part = strtok_r(NULL, " \n", &save);
	off = strtok_r(NULL, " \n", &save);
	meta = strtok_r(NULL, " \n", &save);
	if (meta == NULL || strtok_r(NULL, " \n", &save) != NULL) {
		*why = "expected: topic, partition, offset, metadata";
		return -KLOG_ECORRUPT;
	}
	if (klog_topic_validate(topic, NULL) < 0) {
		*why = "invalid topic name";
		return -KLOG_ECORRUPT;
	}
	if (klog_parse_i64(part, 0, INT32_MAX, &p, why) < 0 ||
	    klog_parse_i64(off, INT64_MIN, INT64_MAX, &v, why) < 0)
		return -KLOG_ECORRUPT;
	if (strcmp(meta, "-") != 0) {
		size_t hl = strlen(meta);

		if (hl % 2 != 0 || hl / 2 > sizeof(bytes)) {
			*why = "metadata: not hex, or too long";
			return -KLOG_ECORRUPT;
		}
		for (; mlen < hl / 2; mlen++) {
			int hi = hexval(meta[2 * mlen]);
			int lo = hexval(meta[2 * mlen + 1]);

			if (hi < 0 || lo < 0) {
				*why = "metadata: not hex, or too long";
				return -KLOG_ECORRUPT;
			}
			bytes[mlen] = (char)(hi << 4 | lo);
		}
	}
	if ((rc = entry_put(g, topic, (int32_t)p, v, bytes, mlen, &dup)) < 0)
		return rc;
	if (dup) {
		*why = "partition listed twice";
		return -KLOG_ECORRUPT;
	}
	return 0;
}

static int
load_file(klog_koffsets_t *o, const char *name, klog_err_t *err)
{
	char id[GROUP_MAX + 1], *line = NULL;
	const char *why = NULL;
	struct kgroup_offsets *g;
	size_t idlen, cap = 0, lineno = 0;
	FILE *fp = NULL;
	int fd, rc = 0;

	if (name_unescape(name, id, &idlen) < 0)
		return klog_err_set(err, -KLOG_ECORRUPT, "%s/%s: not the "
		    "name of a group's offsets", o->dir, name);
	if ((fd = openat(o->dfd, name, O_RDONLY | O_CLOEXEC)) < 0 ||
	    (fp = fdopen(fd, "r")) == NULL) {
		rc = klog_err_set(err, klog_errno_code(errno), "%s/%s: %s",
		    o->dir, name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	if ((g = group_add(o, id, idlen, name)) == NULL) {
		rc = klog_err_set(err, -KLOG_ENOMEM, "out of memory");
		goto out;
	}
	while (getline(&line, &cap, fp) >= 0) {
		lineno++;
		if (lineno == 1) {
			if (strcmp(line, VERSION_LINE "\n") != 0) {
				why = "not \"" VERSION_LINE "\"";
				rc = -KLOG_ECORRUPT;
				break;
			}
			continue;
		}
		if ((rc = parse_line(g, line, &why)) < 0)
			break;
	}
	if (rc == 0 && ferror(fp))
		rc = klog_err_set(err, -KLOG_EIO, "%s/%s: read error", o->dir,
		    name);
	else if (rc == 0 && lineno == 0)
		rc = klog_err_set(err, -KLOG_ECORRUPT, "%s/%s: empty file",
		    o->dir, name);
	else if (rc == -KLOG_ECORRUPT)
		klog_err_set(err, rc, "%s/%s:%zu: %s", o->dir, name, lineno,
		    why);
	else if (rc < 0)
		klog_err_set(err, rc, "%s/%s: %s", o->dir, name,
		    klog_strerror(rc));
out:
	free(line);
	fclose(fp);
	return rc;
}

int
klog_koffsets_open(const char *data_dir, klog_koffsets_t **out,
    klog_err_t *err)
{
	klog_koffsets_t *o;
	struct dirent *de;
	DIR *d = NULL;
	int rc = 0, dfd2;

	*out = NULL;
	if ((o = calloc(1, sizeof(*o))) == NULL)
		return klog_err_set(err, -KLOG_ENOMEM, "out of memory");
	o->dfd = -1;
	if (asprintf(&o->dir, "%s/%s", data_dir, KLOG_KOFFSETS_DIR) < 0) {
		o->dir = NULL;
		rc = klog_err_set(err, -KLOG_ENOMEM, "out of memory");
		goto out;
	}
	if (mkdir(o->dir, 0755) < 0 && errno != EEXIST) {
		rc = klog_err_sys(err, "mkdir", o->dir);
		goto out;
	}
	if ((o->dfd = open(o->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		rc = klog_err_sys(err, NULL, o->dir);
		goto out;
	}
	/* The listing gets a descriptor of its own: closedir closes it. */
	if ((dfd2 = dup(o->dfd)) < 0 || (d = fdopendir(dfd2)) == NULL) {
		rc = klog_err_sys(err, NULL, o->dir);
		if (dfd2 >= 0)
			close(dfd2);
		goto out;
	}
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);

		if (de->d_name[0] == '.') {
			/* A save a crash cut short: the old file stands. */
			if (len > 4 && strcmp(de->d_name + len - 4, ".tmp") == 0)
				(void)unlinkat(o->dfd, de->d_name, 0);
			continue;
		}
		if ((rc = load_file(o, de->d_name, err)) < 0)
			goto out;
	}
out:
	if (d != NULL)
		closedir(d);
	if (rc < 0) {
		klog_koffsets_free(o);
		return rc;
	}
	*out = o;
	return 0;
}

void
klog_koffsets_free(klog_koffsets_t *o)
{
	if (o == NULL)
		return;
	while (o->groups != NULL) {
		struct kgroup_offsets *g = o->groups;

		o->groups = g->next;
		for (size_t i = 0; i < g->n; i++)
			free(g->e[i].meta);
		free(g->e);
		free(g->id);
		free(g);
	}
	if (o->dfd >= 0)
		close(o->dfd);
	free(o->dir);
	free(o);
}

/* ---- the calls ---- */

int
klog_koffsets_put(klog_koffsets_t *o, klog_str_t group, klog_str_t topic,
    int32_t partition, int64_t offset, klog_str_t metadata)
{
	char name[NAME_MAX_ESC + 1], t[KLOG_TOPIC_MAX + 1];
	struct kgroup_offsets *g;
	int rc;

	if ((rc = name_escape(group.p, group.len, name)) < 0)
		return rc;
	if (metadata.len > KLOG_KOFFSETS_MAX_METADATA)
		return -KLOG_ETOOBIG;
	if (topic.len > KLOG_TOPIC_MAX)
		return -KLOG_ETOPIC;
	if (topic.len > 0)
		memcpy(t, topic.p, topic.len);
	t[topic.len] = '\0';
	/* The copy stops at a NUL byte inside the name; the length check
	 * catches it. */
	if (strlen(t) != topic.len || klog_topic_validate(t, NULL) < 0)
		return -KLOG_ETOPIC;
	if (partition < 0)
		return -KLOG_EINVAL;
	if ((g = group_find(o, group)) == NULL &&
	    (g = group_add(o, group.p, group.len, name)) == NULL)
		return -KLOG_ENOMEM;
	return entry_put(g, t, partition, offset, metadata.p, metadata.len,
	    NULL);
}

/* Write g to ".NAME.tmp"; 0, or -1 with errno set. */
static int
write_tmp(const klog_koffsets_t *o, const struct kgroup_offsets *g,
    const char *tmp)
{
	FILE *fp;
	int fd, ok, e;

	fd = openat(o->dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644);
	if (fd < 0)
		return -1;
	if ((fp = fdopen(fd, "w")) == NULL) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	fprintf(fp, "%s\n", VERSION_LINE);
	for (size_t i = 0; i < g->n; i++) {
		const struct entry *x = &g->e[i];

		fprintf(fp, "%s %d %lld ", x->topic, (int)x->partition,
		    (long long)x->offset);
		if (x->meta_len == 0)
			fputc('-', fp);
		for (size_t j = 0; j < x->meta_len; j++)
			fprintf(fp, "%02x", (unsigned char)x->meta[j]);
		fputc('\n', fp);
	}
	ok = fflush(fp) == 0 && !ferror(fp) && fsync(fileno(fp)) == 0;
	e = errno;
	if (fclose(fp) != 0 && ok) {
		ok = 0;
		e = errno;
	}
	errno = e ? e : EIO;
	return ok ? 0 : -1;
}

int
klog_koffsets_save(klog_koffsets_t *o, klog_str_t group, klog_err_t *err)
{
	char name[NAME_MAX_ESC + 1], tmp[NAME_MAX_ESC + 6];
	struct kgroup_offsets *g;
	int rc;

	if ((rc = name_escape(group.p, group.len, name)) < 0)
		return klog_err_set(err, rc, "group id: empty, or too long "
		    "for a file name");
	if ((g = group_find(o, group)) == NULL)
		return 0;     /* nothing put: nothing to write */
	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	if (write_tmp(o, g, tmp) < 0) {
		rc = klog_err_set(err, klog_errno_code(errno), "%s/%s: %s",
		    o->dir, tmp, strerror(errno));
		(void)unlinkat(o->dfd, tmp, 0);
		return rc;
	}
	if (renameat(o->dfd, tmp, o->dfd, name) < 0) {
		rc = klog_err_set(err, klog_errno_code(errno), "rename %s/%s: "
		    "%s", o->dir, name, strerror(errno));
		(void)unlinkat(o->dfd, tmp, 0);
		return rc;
	}
	if (fsync(o->dfd) < 0)
		return klog_err_sys(err, "fsync", o->dir);
	return 0;
}

int
klog_koffsets_get(const klog_koffsets_t *o, klog_str_t group,
    klog_str_t topic, int32_t partition, int64_t *offset,
    klog_str_t *metadata)
{
	const struct kgroup_offsets *g = group_find(o, group);
	char t[KLOG_TOPIC_MAX + 1];
	size_t i;
	int found;

	if (g == NULL || topic.len > KLOG_TOPIC_MAX)
		return 0;
	if (topic.len > 0)
		memcpy(t, topic.p, topic.len);
	t[topic.len] = '\0';
	i = entry_search(g, t, partition, &found);
	if (!found)
		return 0;
	*offset = g->e[i].offset;
	metadata->p = g->e[i].meta;
	metadata->len = g->e[i].meta_len;
	return 1;
}

int
klog_koffsets_at(const klog_koffsets_t *o, klog_str_t group, size_t i,
    klog_str_t *topic, int32_t *partition, int64_t *offset,
    klog_str_t *metadata)
{
	const struct kgroup_offsets *g = group_find(o, group);

	if (g == NULL || i >= g->n)
		return 0;
	topic->p = g->e[i].topic;
	topic->len = (uint16_t)strlen(g->e[i].topic);
	*partition = g->e[i].partition;
	*offset = g->e[i].offset;
	metadata->p = g->e[i].meta != NULL ? g->e[i].meta : "";
	metadata->len = g->e[i].meta_len;
	return 1;
}

int
klog_koffsets_next_group(const klog_koffsets_t *o, const void **cursor,
    klog_str_t *id)
{
	const struct kgroup_offsets *g = *cursor == NULL ? o->groups :
	    ((const struct kgroup_offsets *)*cursor)->next;

	while (g != NULL && g->n == 0)
		g = g->next;
	*cursor = g;
	if (g == NULL)
		return 0;
	id->p = g->id;
	id->len = g->id_len;
	return 1;
}
