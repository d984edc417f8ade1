/* klog-serve's -h text (cmd/serve/usage.c), out of its main, which the
 * options' parsing fills. */
#ifndef KLOG_SERVE_USAGE_H
#define KLOG_SERVE_USAGE_H

#include <stdio.h>

void serve_usage(FILE *f);

#endif
