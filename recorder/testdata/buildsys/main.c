#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "pool.h"
#include "stats.h"

struct item {
	void *link; /* the pool's, while the item is free */
	long value;
	long square;
};

static struct pool pools[2]; /* one per worker */
static long rounds;

static void *worker(void *arg)
{
	long id = (long)arg;
	struct pool *items = &pools[id];
	for (long i = 0; i < rounds; i++) {
		struct item *it = pool_get(items, sizeof *it); /* @get */
		it->value = id * 100 + i;
		it->square = it->value * it->value;
		stats_record(it->square);
		pool_put(items, it);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atol(argv[1]) : 2;
	long stagger = argc > 2 ? atol(argv[2]) : 0;
	pthread_t t[2];
	for (long i = 0; i < 2; i++) {
		pool_init(&pools[i], sizeof(struct item));
		pthread_create(&t[i], NULL, worker, (void *)i);
		if (i == 0 && stagger > 0)
			usleep((useconds_t)stagger);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("total %ld in %ld calls\n", stats_total, stats_calls);
	return 0;
}
