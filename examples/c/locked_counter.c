/*
 * locked_counter.c — a counter incremented under a mutex. Correct:
 * nothing should be reported.
 *
 *   mcpredict cc -O1 -o locked_counter locked_counter.c
 *   mcpredict record -o counter.csv -- ./locked_counter 3 5
 *   mcpredict run counter.csv
 *
 * mcpredict:args 3 5
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long counter;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
	long n = (long)arg;
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&lock);
		long c = counter;
		counter = c + 1;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 1 ? atoi(argv[1]) : 3;
	long n = argc > 2 ? atol(argv[2]) : 5;
	if (nthreads < 1 || nthreads > 64)
		nthreads = 3;
	pthread_t th[64];
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker, (void *)n);
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	printf("counter %ld (expected %ld)\n", counter, nthreads * n);
	return 0;
}
