/*
 * What the partition log's unit tests share (test_log.c, test_logread.c,
 * test_logretain.c, test_logrecover.c): messages whose payload bytes are a
 * function of their number, so that check_contents() can read the whole
 * flushed log back and know each one; opening, appending to and flushing a
 * log of topic TOPIC that fails the test on an error; and a look at the
 * files of partition 0 (a segment's name and size, the names in the
 * directory, the recovery point).  The state is fx/dirfx.h's directory.
 * Header-only, like tmpdir.h.
 */
#ifndef KLOG_TEST_LOGFX_H
#define KLOG_TEST_LOGFX_H

#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "klog/base/error.h"
#include "klog/storage/format.h"
#include "klog/storage/log.h"

#define TOPIC "events"

/* Payload byte i of message m: deterministic, so data can be checked. */
static inline uint8_t
payload_byte(uint32_t m, size_t i)
{
	return (uint8_t)(m * 131 + i * 7 + 1);
}

/*
 * A set of n messages of plen bytes each, numbered from first.  Returns the
 * set's size; buf must hold n * (plen + 9) bytes.
 */
static inline size_t
make_set(uint8_t *buf, uint32_t first, uint32_t n, size_t plen)
{
	uint8_t payload[4096];
	size_t off = 0;

	assert_true(plen <= sizeof(payload));
	for (uint32_t m = first; m < first + n; m++) {
		for (size_t i = 0; i < plen; i++)
			payload[i] = payload_byte(m, i);
		off += klog_entry_encode(buf + off, payload, plen);
	}
	return off;
}

static inline klog_log_t *
open_log(const char *dir, int64_t segment_bytes, int recover)
{
	klog_log_config_t cfg;
	klog_log_t *log = NULL;
	klog_err_t err = { 0 };
	int r;

	klog_log_config_default(&cfg);
	if (segment_bytes > 0)
		cfg.segment_bytes = segment_bytes;
	cfg.recover = recover;
	r = klog_log_open(dir, TOPIC, 0, &cfg, &log, &err);
	if (r != 0)
		fail_msg("open: %s", klog_err_text(&err, r));
	return log;
}

/* Append n messages of plen bytes as one set; returns its first offset. */
static inline int64_t
append(klog_log_t *log, uint32_t first, uint32_t n, size_t plen)
{
	size_t cap = n * klog_entry_size(plen);
	uint8_t *buf = malloc(cap);
	klog_err_t err = { 0 };
	int64_t off = -1;
	size_t len;
	int r;

	assert_non_null(buf);
	len = make_set(buf, first, n, plen);
	r = klog_log_append(log, buf, len, n, &off, &err);
	free(buf);
	if (r != 0)
		fail_msg("append: %s", klog_err_text(&err, r));
	return off;
}

static inline void
flush(klog_log_t *log)
{
	klog_err_t err = { 0 };
	int r = klog_log_flush(log, &err);

	if (r != 0)
		fail_msg("flush: %s", klog_err_text(&err, r));
}

static inline void
seg_file(char *buf, size_t len, const char *dir, int64_t base,
    const char *suffix)
{
	snprintf(buf, len, "%s/" TOPIC "-0/%020lld%s", dir, (long long)base,
	    suffix);
}

static inline off_t
file_size(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_size;
}

static inline void
append_file(const char *path, const void *p, size_t len)
{
	int fd = open(path, O_WRONLY | O_APPEND);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, p, len), (ssize_t)len);
	close(fd);
}

/* Read the whole flushed log through klog_log_read and check every message
 * is message number 0, 1, 2... of plen bytes. */
static inline uint32_t
check_contents(klog_log_t *log, size_t plen)
{
	int64_t off = klog_log_start(log), end = klog_log_flushed_end(log);
	klog_err_t err = { 0 };
	klog_log_slice_t sl;
	klog_iter_t it;
	klog_msg_t m;
	uint32_t next = (uint32_t)(off / (int64_t)klog_entry_size(plen));
	uint8_t *buf;
	int r;

	while (off < end) {
		r = klog_log_read(log, off, 1 << 20, &sl, &err);
		if (r != 0)
			fail_msg("read %lld: %s", (long long)off,
			    klog_err_text(&err, r));
		assert_true(sl.len > 0);
		assert_non_null(buf = malloc(sl.len));
		assert_int_equal(pread(sl.fd, buf, sl.len, sl.file_pos),
		    (ssize_t)sl.len);
		klog_iter_init(&it, buf, sl.len, off, 0, 0);
		while ((r = klog_iter_next(&it, &m)) == 1) {
			assert_true(m.valid);
			assert_int_equal(m.payload_len, plen);
			for (size_t i = 0; i < plen; i++)
				assert_int_equal(m.payload[i],
				    payload_byte(next, i));
			next++;
		}
		assert_int_equal(r, 0);  /* slices end on entry boundaries */
		off = klog_iter_offset(&it);
		klog_iter_free(&it);
		free(buf);
		klog_log_slice_release(&sl);
	}
	return next;
}

/* Append messages first..first+n one per set; *every* one 100 bytes. */
static inline void
append_each(klog_log_t *log, uint32_t first, uint32_t n)
{
	for (uint32_t m = first; m < first + n; m++)
		assert_int_equal(append(log, m, 1, 91), (int64_t)m * 100);
}

/* The names in the partition directory, sorted, space-separated. */
static inline void
part_names(const char *dir, char *buf, size_t len)
{
	char path[PATH_MAX];
	struct dirent **ents;
	int n;

	snprintf(path, sizeof(path), "%s/" TOPIC "-0", dir);
	assert_true((n = scandir(path, &ents, NULL, alphasort)) >= 0);
	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (ents[i]->d_name[0] != '.') {
			if (buf[0] != '\0')
				strncat(buf, " ", len - strlen(buf) - 1);
			strncat(buf, ents[i]->d_name, len - strlen(buf) - 1);
		}
		free(ents[i]);
	}
	free(ents);
}

/* The recovery point's file of partition 0, -1 if there is none. */
static inline int64_t
read_rp(const char *dir)
{
	char path[PATH_MAX];
	long long v = -1;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/" TOPIC "-0/recovery-point", dir);
	if ((fp = fopen(path, "r")) == NULL)
		return -1;
	assert_int_equal(fscanf(fp, "%lld", &v), 1);
	fclose(fp);
	return v;
}

#endif
