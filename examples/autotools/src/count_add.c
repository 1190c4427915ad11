/*
 * count_add.c — hitcount_ok's way of counting a request: one call that
 * adds the hit in one critical section. The correct twin of
 * count_split.c.
 *
 * mcpredict:args 2
 * mcpredict:expect none
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "count.h"

void count_request(struct page_table *t, const char *path)
{
	pagestats_hit(t, path);
}
