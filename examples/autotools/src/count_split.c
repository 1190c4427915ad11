/*
 * count_split.c — hitcount's way of counting a request, with a bug: the
 * page's hits are read with one call and written back, plus one, with
 * another: two critical sections of the table's lock. A worker that
 * counts the same page between the two loses its hit, overwritten with a
 * count made before it. (The markers @get and @set are in
 * lib/pagestats.c.)
 *
 * mcpredict:args 2
 * mcpredict:expect P3 site.pages->hits local:Read@get remote:Write@set local:Write@set
 * mcpredict:reproduce failed
 * mcpredict:window count_request@lookup count_request@store
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "count.h"

void count_request(struct page_table *t, const char *path)
{
	long hits;

	if (pagestats_hits(t, path, &hits) < 0) /* @lookup */
		return;
	pagestats_set_hits(t, path, hits + 1); /* @store */
}
