/*
 * pending_helpers_ok.c — the request table of pending_helpers.c with the
 * request counted in progress, filed and counted done in one critical
 * section of st.lock (op_file()): the auditor, under st.lock, only ever
 * sees st.pending == 0. Correct.
 *
 * mcpredict:args 4 20000
 * mcpredict:expect none
 * mcpredict:reproduce clean
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

/* noipa: the compiler may not assume it leaves st alone */
__attribute__((noipa)) static void put(long id)
{
	table[id % SLOTS] = id; /* @file */
}

__attribute__((noinline)) static void op_file(struct stats *s, long id)
{
	pthread_mutex_lock(&s->lock);
	s->pending++; /* @begin */
	put(id);
	s->pending--; /* @end */
	s->done++;
	pthread_mutex_unlock(&s->lock);
}

__attribute__((noinline)) static void file_request(long id)
{
	pthread_mutex_lock(&table_lock);
	op_file(&st, id);
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
