/*
 * dcl_quota_ok.c — the quotas of dcl_quota.c with quota_of() taking the
 * lock on every call: the slot is still set before the quota, but inside
 * the critical section that sets both, and no client reads a slot without
 * the lock, so none sees a quota before it is set. Correct.
 *
 * mcpredict:args 5 20000
 * mcpredict:expect none
 * mcpredict:reproduce clean
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
	pthread_mutex_lock(&quota_lock);
	if (!quota[shard]) { /* @check */
		int *q = calloc(1, sizeof *q);
		quota[shard] = q; /* @publish */
		*q = QUOTA(shard); /* @fill */
	}
	int *q = quota[shard];
	pthread_mutex_unlock(&quota_lock);
	return q;
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
		fprintf(stderr, "dcl_quota_ok: a client read a quota before it was set (%ld, %ld times)\n",
			ra.refused, rb.refused);
		return 1;
	}
	return 0;
}
