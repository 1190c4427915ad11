/*
 * restore_two_cs.c — a depth counter bumped and restored in two critical
 * sections. A worker, holding the outer lock `outer` for the whole of each
 * round, increments `depth` under `m`, updates the table under `outer`
 * alone, then decrements `depth` under `m` again. Main audits `depth`
 * under `m` and asserts it is 0: the author took `outer` for atomicity,
 * but main never takes `outer`, and between the two critical sections of
 * `m` the counter is 1. Bug: a half-done update seen by another thread;
 * main's assertion fails (SIGABRT).
 *
 * The worker does N rounds, then main, STAGGER µs after it started the
 * worker, audits N times: the recorded run only sees 0. Holding the worker
 * after its bump, at any round, makes main's audit read 1.
 *
 * mcpredict:args 5 20000
 * mcpredict:expect none
 * mcpredict:reproduce failed
 * mcpredict:window round_once@bump round_once@restore
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
	depth++; /* @bump: BUG, the bump in one critical section ... */
	pthread_mutex_unlock(&m);
	update_table(i);
	pthread_mutex_lock(&m);
	depth--; /* @restore: ... and the restore in another */
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
