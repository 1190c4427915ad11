/*
 * restore_two_cs_ok.c — the depth counter of restore_two_cs.c bumped and
 * restored in one critical section of `m`, the table updated inside it:
 * main, which audits `depth` under `m`, only ever sees 0. Correct.
 *
 * mcpredict:args 5 20000
 * mcpredict:expect none
 * mcpredict:reproduce clean
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define SLOTS 8

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;     /* guards depth */
pthread_mutex_t outer = PTHREAD_MUTEX_INITIALIZER; /* guards table; serialises rounds */
int depth;
long table[SLOTS];
static long rounds;

/* noipa: the compiler may not assume it leaves depth alone */
__attribute__((noipa)) static void update_table(long i)
{
	table[i % SLOTS] += i;
}

__attribute__((noinline)) static void round_once(long i)
{
	pthread_mutex_lock(&outer);
	pthread_mutex_lock(&m);
	depth++; /* @bump */
	update_table(i);
	depth--; /* @restore */
	pthread_mutex_unlock(&m);
	pthread_mutex_unlock(&outer);
}

static void *worker(void *arg)
{
	for (long i = 0; i < rounds; i++)
		round_once(i);
	return NULL;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atol(argv[1]) : 5;
	long stagger = argc > 2 ? atol(argv[2]) : 20000;
	pthread_t w;
	pthread_create(&w, NULL, worker, NULL);
	usleep((useconds_t)stagger); /* not synchronisation: the model has no order from it */
	for (long i = 0; i < rounds; i++) {
		pthread_mutex_lock(&m);
		int d = depth; /* @audit */
		assert(d == 0);
		pthread_mutex_unlock(&m);
	}
	pthread_join(w, NULL);
	long sum = 0;
	for (int i = 0; i < SLOTS; i++)
		sum += table[i];
	printf("depth %d, table sum %ld\n", depth, sum);
	return 0;
}
