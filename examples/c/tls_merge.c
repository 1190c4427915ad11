/*
 * tls_merge.c — per-thread counters in __thread storage, merged into a
 * global total under a mutex once at the end; main reads after joining.
 * Correct.
 * mcpredict:args 4 500
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static __thread long mine, seen;
static long total, merges;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int rounds;

static void *work(void *a)
{
	for (int i = 0; i < rounds; i++) {
		mine += i;
		seen++;
	}
	pthread_mutex_lock(&m);
	total += mine;
	merges += seen;
	pthread_mutex_unlock(&m);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	rounds = argc > 2 ? atoi(argv[2]) : 500;
	pthread_t t[16];
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, work, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("%ld %ld\n", total, merges);
	return 0;
}
