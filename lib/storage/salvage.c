/*
 * Reading salvage files back; see salvage.h.
 */
#include <sys/mman.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "klog/storage/format.h"
#include "klog/storage/names.h"
#include "klog/storage/salvage.h"

/* The partition offset a salvage file's name gives its first byte. */
static int
salvage_offset(const char *name, int64_t *off)
{
	size_t n = strlen(name), sl = strlen(KLOG_SALVAGE_SUFFIX);
	int64_t v = 0;

	if (n < 20 + sl || strcmp(name + n - sl, KLOG_SALVAGE_SUFFIX) != 0)
		return -1;
	for (int i = 0; i < 20; i++) {
		if (name[i] < '0' || name[i] > '9' || v > (INT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (name[i] - '0');
	}
	if (name[20] != '.')
		return -1;
	*off = v;
	return 0;
}

/* The messages of the entry at p (whole and valid): a wrapper's inner
 * ones, or itself. */
static int
emit(const char *file, const uint8_t *p, uint32_t length, int64_t off,
    klog_salvage_fn *fn, void *arg, uint64_t *count)
{
	klog_salvaged_t m = { .file = file, .offset = off,
	    .next_offset = off + KLOG_LENGTH_SIZE + length };
	klog_iter_t it;
	klog_msg_t msg;
	int rc;

	klog_iter_init(&it, p, KLOG_LENGTH_SIZE + (size_t)length, off,
	    KLOG_ITER_DEEP, 0);
	while ((rc = klog_iter_next(&it, &msg)) == 1) {
		if (!msg.valid)
			continue;
		m.payload = msg.payload;
		m.payload_len = msg.payload_len;
		m.key = msg.key;
		m.key_len = msg.key_len;
		m.timestamp = msg.timestamp;
		m.headers = msg.headers;
		m.headers_len = msg.headers_len;
		m.header_count = msg.header_count;
		(*count)++;
		if ((rc = fn(arg, &m)) != 0)
			break;
	}
	klog_iter_free(&it);
	return rc > 0 ? rc : 0;   /* an inner set that fails is skipped */
}

static int
read_file(const char *dir, const char *name, int64_t base,
    klog_salvage_fn *fn, void *arg, klog_salvage_info_t *info,
    klog_err_t *err)
{
	char path[PATH_MAX];
	struct stat st;
	uint8_t *map;
	size_t pos = 0;
	int fd, rc = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return klog_err_sys(err, "open", path);
	if (fstat(fd, &st) < 0) {
		rc = klog_err_sys(err, "stat", path);
		close(fd);
		return rc;
	}
	info->files++;
	if (st.st_size == 0) {
		close(fd);
		return 0;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return klog_err_sys(err, "mmap", path);
	while (rc == 0 && pos < (size_t)st.st_size) {
		uint32_t length = klog_entry_valid(map + pos,
		    (size_t)st.st_size - pos);

		if (length == 0) {
			info->skipped++;
			info->zeros += map[pos] == 0;
			pos++;
			continue;
		}
		rc = emit(path, map + pos, length, base + (int64_t)pos, fn, arg,
		    &info->messages);
		pos += KLOG_LENGTH_SIZE + (size_t)length;
	}
	munmap(map, (size_t)st.st_size);
	return rc;
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
klog_salvage_read(const char *dir, klog_salvage_fn *fn, void *arg,
    klog_salvage_info_t *info, klog_err_t *err)
{
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int64_t off;
	DIR *d;
	int rc = 0;

	memset(info, 0, sizeof(*info));
	if ((d = opendir(dir)) == NULL)
		return klog_err_sys(err, "open", dir);
	while ((de = readdir(d)) != NULL) {
		if (salvage_offset(de->d_name, &off) < 0)
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap ? 2 * cap : 8) *
			    sizeof(*nn));

			if (nn == NULL) {
				rc = -KLOG_ENOMEM;
				goto out;
			}
			names = nn;
			cap = cap ? 2 * cap : 8;
		}
		if ((names[n] = strdup(de->d_name)) == NULL) {
			rc = -KLOG_ENOMEM;
			goto out;
		}
		n++;
	}
	qsort(names, n, sizeof(*names), by_name);
	for (size_t i = 0; i < n && rc == 0; i++) {
		(void)salvage_offset(names[i], &off);
		rc = read_file(dir, names[i], off, fn, arg, info, err);
	}
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return rc;
}
