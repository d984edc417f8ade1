/* klog-produce's -h text (cmd/produce/usage.c), out of its main. */
#ifndef KLOG_PRODUCE_USAGE_H
#define KLOG_PRODUCE_USAGE_H

#include <stdio.h>

void produce_usage(FILE *f);

#endif
