/*
 * split_cs.c — a counter read in one critical section and written back in
 * another: two locked sections do not make one atomic update. Bug: lost
 * update (P3).
 * mcpredict:args 2 50
 * mcpredict:expect P3 hits local:Read@read remote:Write@write local:Write@write
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long hits;
static int rounds;

static void bump(void)
{
	long v;
	pthread_mutex_lock(&m);
	v = hits; /* @read */
	pthread_mutex_unlock(&m);
	v = v + 1;
	pthread_mutex_lock(&m);
	hits = v; /* @write */
	pthread_mutex_unlock(&m);
}

static void *work(void *a)
{
	for (int i = 0; i < rounds; i++)
		bump();
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	rounds = argc > 2 ? atoi(argv[2]) : 50;
	pthread_t t[8];
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, work, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("%ld\n", hits);
	return 0;
}
