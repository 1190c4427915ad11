#include "stats.h"

long stats_total, stats_calls;

void stats_record(long value)
{
	long t = stats_total;     /* @read: BUG, the read ... */
	stats_total = t + value;  /* @write: ... and the write are not one atomic step */
	__atomic_fetch_add(&stats_calls, 1, __ATOMIC_RELAXED);
}
