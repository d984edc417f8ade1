/* klog-group's -h text (cmd/group/usage.c). */
#ifndef KLOG_GROUP_USAGE_H
#define KLOG_GROUP_USAGE_H

#include <stdio.h>

void group_usage(FILE *f);

#endif
