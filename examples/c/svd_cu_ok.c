/*
 * svd_cu_ok.c — the log buffer of svd_cu_bug.c with its lock: append()
 * reads the count, fills the slot and stores the new count inside one
 * critical section. The two writers still run at the same time and access
 * logb.count one after the other, but never inside the other's
 * computation: every computational unit is serializable.
 * mcpredict:args 2 4
 * mcpredict:expect none
 * mcpredict:reports svd none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define SLOTS 64

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static struct {
	int count;
	long recs[SLOTS];
} logb;
static int rounds;

__attribute__((noinline)) static void append(long rec)
{
	pthread_mutex_lock(&m);
	int n = logb.count;
	logb.recs[n % SLOTS] = rec;
	logb.count = n + 1;
	pthread_mutex_unlock(&m);
	usleep(300); /* the next record */
}

static void *writer(void *arg)
{
	long id = (long)arg;
	for (int i = 0; i < rounds; i++)
		append(id * 1000 + i);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	rounds = argc > 2 ? atoi(argv[2]) : 4;
	pthread_t t[8];
	if (n > 8)
		n = 8;
	for (long i = 0; i < n; i++)
		pthread_create(&t[i], NULL, writer, (void *)(i + 1));
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("%d records (expected %d)\n", logb.count, n * rounds);
	return 0;
}
