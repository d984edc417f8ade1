/*
 * A throwaway standalone ZooKeeper for the unit tests that need a real one
 * (test_zk, test_member): a server on a free loopback port in a temporary
 * directory, tickTime=500 so that sessions of 1-10 s are allowed, killed by
 * its pid.  Header-only, like fakebroker.h.
 */
#ifndef KLOG_TEST_ZKSERVER_H
#define KLOG_TEST_ZKSERVER_H

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "klog/zk/zk.h"
#include "fx/tmpdir.h"

#define ZKSERVER_SH "/usr/share/zookeeper/bin/zkServer.sh"

typedef struct zkserver {
	pid_t pid;
	char dir[64];
	char connect[64];
	const char *jvmflags;   /* the server JVM's extra -D flags, or NULL */
} zkserver_t;

/* A loopback port that was free a moment ago; -1 if none. */
static inline int
zkserver_free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static inline int
zkserver_spawn(zkserver_t *s)
{
	char cfg[128];
	FILE *f;
	int port = zkserver_free_port(), fd;

	if (port < 0 || tmpdir_make(s->dir, sizeof(s->dir), "zk") == NULL)
		return -1;
	snprintf(cfg, sizeof(cfg), "%s/zoo.cfg", s->dir);
	if ((f = fopen(cfg, "w")) == NULL)
		return -1;
	fprintf(f, "tickTime=500\ndataDir=%s/data\nclientPort=%d\n"
	    "clientPortAddress=127.0.0.1\nadmin.enableServer=false\n"
	    "minSessionTimeout=1000\nmaxSessionTimeout=10000\n"
	    "maxClientCnxns=0\nforceSync=no\n", s->dir, port);
	if (fclose(f) != 0)
		return -1;
	snprintf(s->connect, sizeof(s->connect), "127.0.0.1:%d", port);
	if ((s->pid = fork()) < 0)
		return -1;
	if (s->pid == 0) {
		/* zkServer.sh execs java, so this pid is the server's; it
		 * dies with the test even if the test crashes. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if ((fd = open("/dev/null", O_RDWR)) >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		setenv("JMXDISABLE", "true", 1);
		if (s->jvmflags != NULL)
			setenv("SERVER_JVMFLAGS", s->jvmflags, 1);
		execl(ZKSERVER_SH, ZKSERVER_SH, "start-foreground", cfg,
		    (char *)NULL);
		_exit(127);
	}
	return 0;
}

/*
 * Start a server, its JVM given jvmflags (NULL: none; e.g. a -D that turns
 * a server feature off), and wait until it serves: 1; 0 if there is no
 * zkServer.sh (the caller skips its tests); -1 if it did not start.
 */
static inline int
zkserver_start_with(zkserver_t *s, const char *jvmflags)
{
	klog_zk_t *zk;
	klog_err_t err;

	memset(s, 0, sizeof(*s));
	s->jvmflags = jvmflags;
	if (access(ZKSERVER_SH, X_OK) != 0)
		return 0;
	if (zkserver_spawn(s) < 0)
		return -1;
	/* The client retries until the JVM serves: one long bounded wait. */
	if (klog_zk_open(s->connect, 4000, 30000, &zk, &err) < 0) {
		fprintf(stderr, "zkserver: did not start: %s\n", err.msg);
		return -1;
	}
	klog_zk_close(zk);
	return 1;
}

static inline int
zkserver_start(zkserver_t *s)
{
	return zkserver_start_with(s, NULL);
}

static inline void
zkserver_stop(zkserver_t *s)
{
	if (s->pid > 0) {
		kill(s->pid, SIGKILL);
		waitpid(s->pid, NULL, 0);
	}
	if (s->dir[0] != '\0')
		tmpdir_remove(s->dir);
}

/*
 * The one server of a test program, started by its group setup (pass
 * group_setup and group_teardown to cmocka_run_group_tests()); a test that
 * needs it starts with NEED_SERVER(), which skips it when ZooKeeper is not
 * installed.
 */
static zkserver_t server;
static int have_server;

#define NEED_SERVER() do { if (!have_server) skip(); } while (0)

static int
group_setup(void **state)
{
	int rc = zkserver_start(&server);

	(void)state;
	have_server = rc == 1;
	return rc < 0 ? -1 : 0;
}

static int
group_teardown(void **state)
{
	(void)state;
	zkserver_stop(&server);
	return 0;
}

#endif
