/*
 * The one exit-status table of every klog tool.  Each man page's EXIT STATUS
 * section repeats it and the bats tests assert it.
 */
#ifndef KLOG_EXIT_H
#define KLOG_EXIT_H

#include "klog/base/error.h"

enum klog_exit {
	KLOG_EXIT_OK = 0,          /* success */
	KLOG_EXIT_FAIL = 1,        /* failure, or a checker's "no" (--verify) */
	KLOG_EXIT_USAGE = 64,      /* bad command line */
	KLOG_EXIT_DATAERR = 65,    /* corrupt data */
	KLOG_EXIT_UNAVAILABLE = 69,/* broker or ZooKeeper unavailable */
	KLOG_EXIT_IOERR = 74,      /* I/O error (disk, stdout) */
	KLOG_EXIT_NOPERM = 77      /* authentication failed (a certificate,
	                              SASL credentials or a ZooKeeper identity
	                              refused), or not authorized (sysexits'
	                              EX_NOPERM) */
};

/* The exit status a main should use for a failed call that returned err. */
static inline int
klog_exit_for(int err)
{
	switch (err < 0 ? -err : err) {
	case KLOG_OK:
		return KLOG_EXIT_OK;
	case KLOG_ECORRUPT:
	case KLOG_EPARTIAL:
		return KLOG_EXIT_DATAERR;
	case KLOG_ECONN:
	case KLOG_ETIMEDOUT:
	case KLOG_EZK:
	case KLOG_ENOTLEADER:   /* no leader, or too few replicas: given up */
	case KLOG_ENOREPLICAS:
		return KLOG_EXIT_UNAVAILABLE;
	case KLOG_EIO:
	case KLOG_ENOSPC:
	case KLOG_ESTORAGE:
		return KLOG_EXIT_IOERR;
	case KLOG_EAUTH:
	case KLOG_EDENIED:
		return KLOG_EXIT_NOPERM;
	default:
		return KLOG_EXIT_FAIL;
	}
}

#endif
