/*
 * klog-produce --report (cmd/produce/report.c), out of its main: the
 * delivery report names records by their input numbers, which records
 * not sent (blank, oversized, already at a mirror's destination) set
 * apart from the producer's send numbers.
 */
#ifndef KLOG_PRODUCE_REPORT_H
#define KLOG_PRODUCE_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "klog/client/producer.h"
#include "klog/client/renumber.h"

typedef struct produce_report {
	FILE *f;                   /* NULL: no report */
	klog_renumber_t inputs;    /* send numbers to input numbers */
} produce_report_t;

/* After send number sent went out as input record recno: 0, or -1 when
 * out of memory. */
int produce_report_sent(produce_report_t *rp, uint64_t recno, uint64_t sent);

/*
 * One JSON line per record of a request done: its input number,
 * partition and offset (a message inside a gzip wrapper has the wrapper's,
 * as klog-consume shows it; null with -a 0), or the error.
 */
void produce_report_done(const produce_report_t *rp,
    const klog_producer_done_t *d);

void produce_report_free(produce_report_t *rp);

#endif
