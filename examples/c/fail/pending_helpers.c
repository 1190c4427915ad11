/*
 * pending_helpers.c — a request table whose statistics count the requests
 * in progress: op_begin() increments st.pending under st.lock, the worker
 * files the request under the table lock, and op_end() decrements
 * st.pending (and counts it done) under st.lock again. The worker holds
 * the table lock across the three steps, so the author took the request
 * as atomic; the auditor, which checks that no request is half-filed,
 * takes st.lock only. Bug: st.pending seen between op_begin() and
 * op_end(); the auditor's assertion st.pending == 0 fails (SIGABRT).
 *
 * The first worker files N requests; the auditor starts STAGGER µs
 * later and audits N times; the second worker starts STAGGER µs after
 * the auditor and files N more: in the recorded run, no audit meets a
 * request in progress. Holding the first worker between op_begin() and
 * op_end(), at any request, makes the audit read 1. (Were the second
 * worker started before the auditor, it would block on the table lock
 * the held first worker holds, and that ends the hold at once.)
 *
 * mcpredict:args 4 20000
 * mcpredict:expect none
 * mcpredict:reproduce failed
 * mcpredict:window op_begin@begin op_end@end
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define SLOTS 16

struct stats {
	pthread_mutex_t lock;
	int pending; /* requests begun and not ended */
	long done;
};

struct stats st = {PTHREAD_MUTEX_INITIALIZER, 0, 0};
pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
long table[SLOTS];
static long rounds;

__attribute__((noinline)) static void op_begin(struct stats *s)
{
	pthread_mutex_lock(&s->lock);
	s->pending++; /* @begin: BUG, counted in progress in one critical section ... */
	pthread_mutex_unlock(&s->lock);
}

__attribute__((noinline)) static void op_end(struct stats *s)
{
	pthread_mutex_lock(&s->lock);
	s->pending--; /* @end: ... and done in another */
	s->done++;
	pthread_mutex_unlock(&s->lock);
}

__attribute__((noinline)) static void file_request(long id)
{
	pthread_mutex_lock(&table_lock);
	op_begin(&st);
	table[id % SLOTS] = id; /* @file */
	op_end(&st);
	pthread_mutex_unlock(&table_lock);
}

static void *worker(void *arg)
{
	long base = (long)arg;
	for (long i = 0; i < rounds; i++)
		file_request(base + i);
	return NULL;
}

static void *auditor(void *arg)
{
	long seen = 0;
	for (long i = 0; i < rounds; i++) {
		pthread_mutex_lock(&st.lock);
		assert(st.pending == 0); /* @audit: no request half-filed */
		seen = st.done;
		pthread_mutex_unlock(&st.lock);
	}
	return (void *)seen;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atol(argv[1]) : 4;
	long stagger = argc > 2 ? atol(argv[2]) : 20000;
	pthread_t w1, w2, a;
	pthread_create(&w1, NULL, worker, (void *)0L);
	usleep((useconds_t)stagger); /* not synchronisation: the model has no order from it */
	pthread_create(&a, NULL, auditor, NULL);
	usleep((useconds_t)stagger);
	pthread_create(&w2, NULL, worker, (void *)100L);
	void *seen;
	pthread_join(w1, NULL);
	pthread_join(w2, NULL);
	pthread_join(a, &seen);
	printf("%ld requests done, the auditor saw %ld\n", st.done, (long)seen);
	return 0;
}
