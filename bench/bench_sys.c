/*
 * The machine's own limits, measured in the same run as klog's figures so
 * that those can be quoted as fractions of them:
 *   bench_sys loopback [MB]   TCP over 127.0.0.1, one sender thread, one
 *                             receiver, 256 KiB writes and reads
 *   bench_sys pagecache [MB]  write(2) of 1 MiB blocks into a new file in
 *                             $TMPDIR (page cache, no fsync)
 * Prints "<name>_mb_s <median>" after the individual runs.
 */
#include <err.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RUNS 5
#define CHUNK (256 * 1024)

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct sender {
	int port;
	size_t bytes;
};

static void *
send_all(void *arg)
{
	struct sender *s = arg;
	struct sockaddr_in sa = { .sin_family = AF_INET,
	    .sin_port = htons((uint16_t)s->port),
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	char *buf = calloc(1, CHUNK);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (buf == NULL || fd < 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		err(1, "connect");
	for (size_t left = s->bytes; left > 0;) {
		ssize_t n = write(fd, buf, left < CHUNK ? left : CHUNK);
		if (n <= 0)
			err(1, "write");
		left -= (size_t)n;
	}
	close(fd);
	free(buf);
	return NULL;
}

static double
loopback_once(size_t bytes)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	struct sender s = { 0, bytes };
	pthread_t t;
	char *buf = malloc(CHUNK);
	int lfd = socket(AF_INET, SOCK_STREAM, 0), cfd;
	size_t got = 0;
	double t0;

	if (buf == NULL || lfd < 0 ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(lfd, 1) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&sa, &len) < 0)
		err(1, "listen");
	s.port = ntohs(sa.sin_port);
	t0 = now_s();
	pthread_create(&t, NULL, send_all, &s);
	if ((cfd = accept(lfd, NULL, NULL)) < 0)
		err(1, "accept");
	for (ssize_t n; (n = read(cfd, buf, CHUNK)) > 0;)
		got += (size_t)n;
	pthread_join(t, NULL);
	t0 = now_s() - t0;
	close(cfd);
	close(lfd);
	free(buf);
	if (got != bytes)
		errx(1, "loopback: got %zu of %zu bytes", got, bytes);
	return (double)bytes / t0 / 1e6;
}

static double
pagecache_once(size_t bytes)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char path[4096];
	char *buf = calloc(1, 1 << 20);
	int fd;
	double t0;

	snprintf(path, sizeof(path), "%s/bench_sys.XXXXXX", dir);
	if (buf == NULL || (fd = mkstemp(path)) < 0)
		err(1, "%s", path);
	unlink(path);
	t0 = now_s();
	for (size_t left = bytes; left > 0;) {
		size_t n = left < (1 << 20) ? left : (1 << 20);
		if (write(fd, buf, n) != (ssize_t)n)
			err(1, "write");
		left -= n;
	}
	t0 = now_s() - t0;
	close(fd);
	free(buf);
	return (double)bytes / t0 / 1e6;
}

int
main(int argc, char **argv)
{
	double r[RUNS];
	size_t mb;
	int loop;

	if (argc < 2 || (strcmp(argv[1], "loopback") != 0 &&
	    strcmp(argv[1], "pagecache") != 0))
		errx(64, "usage: bench_sys loopback|pagecache [MB]");
	loop = strcmp(argv[1], "loopback") == 0;
	mb = argc > 2 ? strtoul(argv[2], NULL, 10) : 1024;
	if (mb == 0)
		errx(64, "MB must be positive");
	for (int i = 0; i < RUNS; i++) {
		r[i] = loop ? loopback_once(mb << 20) : pagecache_once(mb << 20);
		printf("# %s run %d: %.0f MB/s\n", argv[1], i + 1, r[i]);
	}
	qsort(r, RUNS, sizeof(r[0]), cmp_double);
	printf("%s_mb_s %.0f\n", argv[1], r[RUNS / 2]);
	return 0;
}
