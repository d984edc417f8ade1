#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "klog/net/connaddr.h"

struct klog_connaddr {
	uint8_t key[KLOG_CONNADDR_KEY];
	uint32_t n;
	klog_connaddr_t *next;
};

int
klog_connaddr_key(int fd, uint8_t key[KLOG_CONNADDR_KEY], char *host,
    size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	memset(key, 0, KLOG_CONNADDR_KEY);
	if (len > 0)
		host[0] = '\0';
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) < 0)
		return 0;
	key[0] = (uint8_t)ss.ss_family;
	if (ss.ss_family == AF_INET)
		memcpy(key + 1, &((struct sockaddr_in *)&ss)->sin_addr, 4);
	else if (ss.ss_family == AF_INET6)
		memcpy(key + 1, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
	else
		return 0;
	inet_ntop(key[0], key + 1, host, (socklen_t)len);
	return 1;
}

static klog_connaddr_t **
slot(klog_connaddrs_t *t, const uint8_t key[KLOG_CONNADDR_KEY])
{
	uint32_t h = 2166136261u;

	for (int i = 0; i < KLOG_CONNADDR_KEY; i++)
		h = (h ^ key[i]) * 16777619u;
	return &t->buckets[h % KLOG_CONNADDR_BUCKETS];
}

klog_connaddr_t *
klog_connaddr_take(klog_connaddrs_t *t, const uint8_t key[KLOG_CONNADDR_KEY],
    int max, int *full)
{
	klog_connaddr_t **s = slot(t, key), *a;

	*full = 0;
	for (a = *s; a != NULL; a = a->next)
		if (memcmp(a->key, key, KLOG_CONNADDR_KEY) == 0)
			break;
	if (a == NULL) {
		if ((a = calloc(1, sizeof(*a))) == NULL)
			return NULL;
		memcpy(a->key, key, KLOG_CONNADDR_KEY);
		a->next = *s;
		*s = a;
	}
	if (max > 0 && a->n >= (uint32_t)max) {
		*full = 1;
		return NULL;
	}
	a->n++;
	return a;
}

void
klog_connaddr_drop(klog_connaddrs_t *t, klog_connaddr_t *a)
{
	klog_connaddr_t **pp;

	if (a == NULL || --a->n > 0)
		return;
	for (pp = slot(t, a->key); *pp != a; pp = &(*pp)->next)
		;
	*pp = a->next;
	free(a);
}
