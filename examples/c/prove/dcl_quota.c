/*
 * dcl_quota.c — double-checked locking on a table of lazily allocated
 * ints: a rate limiter keeps each shard's request quota in an int of its
 * own, allocated on first use. quota_of() tests the shard's slot without
 * the lock and, when it is NULL, takes the lock, tests it again, allocates
 * the int, stores the pointer in the slot and only then the quota. A
 * thread that tests the slot between the two stores takes the fast path
 * and reads a quota of 0: it turns its requests away. Bug: a read of an
 * unfilled object (a slot and the int it points to written in one critical
 * section, seen half done by a thread that takes no lock); the clients
 * check the quota they see, and main exits 1 when one saw 0.
 *
 * The same idiom as dcl_singleton.c written another way: no struct (the
 * one "field" is the int itself, quota[i][0] to the recorder), one
 * pointer per table slot, and the reader's loop over the shards.
 *
 * Two clients each make N rounds of one request per shard; the second
 * starts STAGGER µs after the first, which has allocated every shard's
 * quota by then, so the recorded run reads only quotas set. Holding the
 * first client between the store of the slot and that of the quota lets
 * the second read the 0.
 *
 * mcpredict:args 5 20000
 * mcpredict:expect M5 quota[0] local:Write@publish local:Write@fill remote:Read@use
 * mcpredict:reproduce failed
 * mcpredict:window quota_of@publish quota_of@fill
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NSHARD 4
#define QUOTA(i) (100 * ((i) + 1))

static int *quota[NSHARD];
static pthread_mutex_t quota_lock = PTHREAD_MUTEX_INITIALIZER;
static long rounds;

__attribute__((noinline)) static int *quota_of(int shard)
{
	if (!quota[shard]) { /* @check: BUG, tested without the lock */
		pthread_mutex_lock(&quota_lock);
		if (!quota[shard]) {
			int *q = calloc(1, sizeof *q);
			quota[shard] = q; /* @publish: BUG, the slot is set ... */
			*q = QUOTA(shard); /* @fill: ... before the quota is */
		}
		pthread_mutex_unlock(&quota_lock);
	}
	return quota[shard];
}

struct result { long refused, served; };

static void *client(void *arg)
{
	struct result *r = arg;
	for (long i = 0; i < rounds; i++) {
		for (int s = 0; s < NSHARD; s++) {
			int *q = quota_of(s);
			if (*q != QUOTA(s)) { /* @use */
				r->refused++;
				continue;
			}
			r->served++;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atol(argv[1]) : 5;
	long stagger = argc > 2 ? atol(argv[2]) : 20000;
	struct result ra = { 0, 0 }, rb = { 0, 0 };
	pthread_t a, b;
	pthread_create(&a, NULL, client, &ra);
	usleep((useconds_t)stagger); /* not synchronisation: the model has no order from it */
	pthread_create(&b, NULL, client, &rb);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("served %ld %ld\n", ra.served, rb.served);
	if (ra.refused || rb.refused) {
		fprintf(stderr, "dcl_quota: a client read a quota before it was set (%ld, %ld times)\n",
			ra.refused, rb.refused);
		return 1;
	}
	return 0;
}
