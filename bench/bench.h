/*
 * Helpers shared by the bench programs that talk to a broker
 * (bench_produce, bench_consume, bench_latency): clocks, a common start
 * time for several processes, option parsing, one connection, and the two
 * round trips that tell where a partition ends.  Everything is static
 * inline so that each program keeps only what it uses; failures end the
 * program with errx(3), since only these mains include it.
 */
#ifndef KLOG_BENCH_H
#define KLOG_BENCH_H

#include <err.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "klog/base/exit.h"
#include "klog/base/parse.h"
#include "klog/client/client.h"
#include "klog/proto/proto.h"
#include "klog/storage/format.h"

#define BENCH_TIMEOUT_MS 10000

static inline double
bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline int64_t
bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Wall-clock seconds: the one clock that several processes share, so that
 * a script can put their windows side by side. */
static inline double
bench_wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Sleep until the wall clock reads epoch_ms (0: do not wait). */
static inline void
bench_start_at(int64_t epoch_ms)
{
	struct timespec ts = { .tv_sec = epoch_ms / 1000,
	    .tv_nsec = epoch_ms % 1000 * 1000000 };

	if (epoch_ms <= 0)
		return;
	while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) ==
	    EINTR)
		;
}

/* Strict integer and size options: a bad one is a usage error. */
static inline int64_t
bench_opt_i64(const char *prog, const char *opt, const char *s, int64_t min,
    int64_t max)
{
	const char *why;
	int64_t v;

	if (klog_parse_i64(s, min, max, &v, &why) < 0)
		errx(KLOG_EXIT_USAGE, "%s: %s: %s (try '%s -h')", opt, s, why,
		    prog);
	return v;
}

static inline int64_t
bench_opt_size(const char *prog, const char *opt, const char *s, int64_t min,
    int64_t max)
{
	const char *why;
	int64_t v;

	if (klog_parse_size(s, min, max, &v, &why) < 0)
		errx(KLOG_EXIT_USAGE, "%s: %s: %s (try '%s -h')", opt, s, why,
		    prog);
	return v;
}

static inline int
bench_opt_acks(const char *prog, const char *s)
{
	if (strcmp(s, "all") == 0)
		return KLOG_ACKS_ALL;
	return (int)bench_opt_i64(prog, "-a", s, -1, 1);
}

/* One connection to "host:port"; the caller owns it. */
static inline klog_client_t *
bench_connect(const char *broker)
{
	klog_client_addr_t *addrs;
	klog_client_t *c;
	klog_err_t e = { 0 };
	size_t n;
	int rc;

	if ((rc = klog_client_parse_brokers(broker, &addrs, &n, &e)) < 0)
		errx(KLOG_EXIT_USAGE, "-b: %s", klog_err_text(&e, rc));
	rc = klog_client_open(&addrs[0], BENCH_TIMEOUT_MS, &c, &e);
	free(addrs);
	if (rc < 0)
		errx(KLOG_EXIT_UNAVAILABLE, "%s", klog_err_text(&e, rc));
	return c;
}

/* Wait for the socket (events as poll(2)); a signal just returns. */
static inline void
bench_wait(klog_client_t *c, short events, int timeout_ms)
{
	struct pollfd pfd = { .fd = klog_client_fd(c), .events = events };

	if (poll(&pfd, 1, timeout_ms) < 0 && errno != EINTR)
		err(KLOG_EXIT_FAIL, "poll");
}

/* Round trip of the request just encoded into klog_client_out(c). */
static inline void
bench_call(klog_client_t *c, int32_t id, const uint8_t **body, size_t *len)
{
	klog_err_t e = { 0 };
	int16_t error;
	int rc;

	if ((rc = klog_client_call(c, id, BENCH_TIMEOUT_MS, &error, body, len,
	    &e)) < 0)
		errx(klog_exit_for(rc), "%s", klog_err_text(&e, rc));
	if (error != KLOG_WIRE_NONE)
		errx(KLOG_EXIT_FAIL, "%s: %s", klog_client_name(c),
		    klog_wire_error_name(error));
}

/* Check a decoded produce answer: every part appended. */
static inline void
bench_check_produce(const klog_produce_result_t *res, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (res[i].error != KLOG_WIRE_NONE)
			errx(KLOG_EXIT_FAIL, "topic \"%.*s\" partition %d: %s",
			    (int)res[i].topic.len, res[i].topic.p,
			    (int)res[i].partition,
			    klog_wire_error_name(res[i].error));
}

/*
 * The end of partitions first .. first+n-1 of topic, into ends[], by a
 * produce request with empty sets and acks 1: it creates the topic if the
 * broker auto-creates, and, being answered in order behind every earlier
 * request of the connection, it also tells when those were appended.
 * (An OFFSETS request would wait for a flush.)
 */
static inline void
bench_produce_ends(klog_client_t *c, const char *topic, int32_t first,
    int32_t n, int64_t *ends)
{
	klog_produce_part_t *parts = calloc((size_t)n, sizeof(*parts));
	klog_produce_result_t *res = calloc((size_t)n, sizeof(*res));
	klog_produce_req_t req = { .acks = KLOG_ACKS_LEADER,
	    .timeout_ms = BENCH_TIMEOUT_MS, .count = (uint32_t)n,
	    .parts = parts };
	int32_t id = klog_client_next_id(c);
	const uint8_t *body;
	uint32_t got;
	size_t len;

	if (parts == NULL || res == NULL)
		errx(KLOG_EXIT_FAIL, "out of memory");
	for (int32_t i = 0; i < n; i++)
		parts[i] = (klog_produce_part_t){ .topic = { topic,
		    (uint16_t)strlen(topic) }, .partition = first + i,
		    .set = (const uint8_t *)topic };
	if (klog_proto_encode_produce(klog_client_out(c), id, &req) < 0)
		errx(KLOG_EXIT_USAGE, "topic \"%s\": invalid", topic);
	bench_call(c, id, &body, &len);
	if (klog_proto_decode_produce_resp(body, len, res, (uint32_t)n,
	    &got) < 0 || got != (uint32_t)n)
		errx(KLOG_EXIT_FAIL, "%s: malformed produce answer",
		    klog_client_name(c));
	bench_check_produce(res, got);
	for (int32_t i = 0; i < n; i++)
		ends[i] = res[i].offset;
	free(parts);
	free(res);
}

/* OFFSETS for one partition: time KLOG_OFFSET_LATEST or _EARLIEST. */
static inline int64_t
bench_offset(klog_client_t *c, const char *topic, int32_t partition,
    int64_t time)
{
	klog_offsets_part_t part = { .topic = { topic,
	    (uint16_t)strlen(topic) }, .partition = partition, .time = time,
	    .max = 1 };
	klog_offsets_result_t res;
	int32_t id = klog_client_next_id(c);
	const uint8_t *body;
	uint32_t got;
	size_t len;

	if (klog_proto_encode_offsets(klog_client_out(c), id, &part, 1) < 0)
		errx(KLOG_EXIT_USAGE, "topic \"%s\": invalid", topic);
	bench_call(c, id, &body, &len);
	if (klog_proto_decode_offsets_resp(body, len, &res, 1, &got) < 0 ||
	    got != 1)
		errx(KLOG_EXIT_FAIL, "%s: malformed offsets answer",
		    klog_client_name(c));
	if (res.error != KLOG_WIRE_NONE || res.count < 1)
		errx(KLOG_EXIT_FAIL, "topic \"%s\" partition %d: %s", topic,
		    (int)partition, res.error != KLOG_WIRE_NONE ?
		    klog_wire_error_name(res.error) : "no offset");
	return klog_proto_offset_at(&res, 0);
}

/* Payload bytes that do not compress: xorshift64 from a seed. */
static inline void
bench_fill(uint8_t *p, size_t n, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)(x >> 32);
	}
}

#endif
