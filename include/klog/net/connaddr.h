/*
 * How many connections each client address holds, for
 * --max-connections-per-address (conn.h): a hash table of counts, one
 * entry per address while it has a connection.
 */
#ifndef KLOG_CONNADDR_H
#define KLOG_CONNADDR_H

#include <stddef.h>
#include <stdint.h>

#define KLOG_CONNADDR_BUCKETS 4096
#define KLOG_CONNADDR_KEY 17       /* family byte, then 4 or 16 bytes */

typedef struct klog_connaddr klog_connaddr_t;

typedef struct klog_connaddrs {
	klog_connaddr_t *buckets[KLOG_CONNADDR_BUCKETS];
} klog_connaddrs_t;

/* The key of fd's peer address, and the address as inet_ntop(3) writes
 * it into host (len bytes); 0 for none (not an IP socket). */
int klog_connaddr_key(int fd, uint8_t key[KLOG_CONNADDR_KEY], char *host,
    size_t len);

/* One more connection from key's address: its entry, or NULL when the
 * address holds max already (*full; max 0: no bound) or memory is short
 * (then it is not counted). */
klog_connaddr_t *klog_connaddr_take(klog_connaddrs_t *t,
    const uint8_t key[KLOG_CONNADDR_KEY], int max, int *full);

/* One connection fewer; NULL is fine. */
void klog_connaddr_drop(klog_connaddrs_t *t, klog_connaddr_t *a);

#endif
