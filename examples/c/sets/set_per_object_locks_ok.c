/*
 * set_per_object_locks_ok.c — a latency histogram whose buckets each have
 * their own mutex and a pair of fields { count, sum } (the bucket's mean is
 * sum / count and must lie within the bucket's range). Recorder threads
 * add each sample to its bucket, both fields in one critical section of
 * that bucket's lock; a checker visits the buckets one at a time and
 * reads both fields of a bucket in one critical section of its lock. Every
 * pair is only accessed under its own object's lock, held across both
 * fields. Correct: nothing should be reported.
 * mcpredict:args 3 20
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NBUCKETS 4
#define WIDTH 100 /* microseconds per bucket */

struct bucket {
	pthread_mutex_t lock;
	long count;
	long sum;
};

static struct bucket hist[NBUCKETS];
static int nrecorders, rounds;

static void hist_add(long usec)
{
	struct bucket *b = &hist[usec / WIDTH % NBUCKETS];
	pthread_mutex_lock(&b->lock);
	b->count++;
	b->sum += usec;
	pthread_mutex_unlock(&b->lock);
}

/* Whether bucket i's mean lies in its range. */
static int bucket_ok(int i)
{
	struct bucket *b = &hist[i];
	int ok = 1;
	pthread_mutex_lock(&b->lock);
	if (b->count > 0) {
		long mean = b->sum / b->count;
		ok = mean >= i * WIDTH && mean < (i + 1) * WIDTH;
	}
	pthread_mutex_unlock(&b->lock);
	return ok;
}

static void *recorder(void *arg)
{
	long seed = (long)arg * 37 + 11;
	for (int i = 0; i < rounds; i++) {
		seed = (seed * 1103515245 + 12345) & 0x7fffffff;
		usleep(50); /* serve a request */
		hist_add(seed % (NBUCKETS * WIDTH));
	}
	return NULL;
}

static void *checker(void *arg)
{
	int bad = 0;
	for (int r = 0; r < rounds / NBUCKETS + 1; r++) {
		for (int i = 0; i < NBUCKETS; i++)
			if (!bucket_ok(i))
				bad++;
		usleep(200);
	}
	return (void *)(long)bad;
}

int main(int argc, char **argv)
{
	nrecorders = argc > 1 ? atoi(argv[1]) : 3;
	rounds = argc > 2 ? atoi(argv[2]) : 20;
	for (int i = 0; i < NBUCKETS; i++)
		pthread_mutex_init(&hist[i].lock, NULL);
	pthread_t c, t[8];
	void *bad;
	pthread_create(&c, NULL, checker, NULL);
	for (long i = 0; i < nrecorders; i++)
		pthread_create(&t[i], NULL, recorder, (void *)i);
	for (int i = 0; i < nrecorders; i++)
		pthread_join(t[i], NULL);
	pthread_join(c, &bad);
	for (int i = 0; i < NBUCKETS; i++)
		printf("[%d, %d) us: %ld samples\n", i * WIDTH, (i + 1) * WIDTH, hist[i].count);
	printf("%ld bad buckets seen\n", (long)bad);
	return 0;
}
