/*
 * trylock_spin.c — a two-field invariant (total = a + b) kept under a
 * mutex that threads acquire by spinning on pthread_mutex_trylock.
 * Correct.
 * mcpredict:args 3 200
 * mcpredict:expect none
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static struct { long a, b, total; } acct = { 100, 100, 200 };
static int rounds;

static void *move(void *arg)
{
	long dir = (long)arg;
	for (int i = 0; i < rounds; i++) {
		while (pthread_mutex_trylock(&m) != 0)
			sched_yield();
		if (dir & 1) { acct.a -= 1; acct.b += 1; }
		else { acct.a += 1; acct.b -= 1; }
		acct.total = acct.a + acct.b;
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	rounds = argc > 2 ? atoi(argv[2]) : 200;
	pthread_t t[8];
	for (long i = 0; i < n; i++)
		pthread_create(&t[i], NULL, move, (void *)i);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("%ld\n", acct.total);
	return 0;
}
