/*
 * detached_done.c — detached workers fill in their results and count
 * themselves done under a mutex; main waits on a condition variable until
 * all are done, without joining, then reads the results. Correct.
 * mcpredict:args 4
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t all_done = PTHREAD_COND_INITIALIZER;
static int done, n;
static struct result { long sum; int count; } results[16];

static void *work(void *a)
{
	long id = (long)a;
	struct result *r = &results[id];
	for (int i = 0; i < 100; i++) {
		r->sum += i * id;
		r->count++;
	}
	pthread_mutex_lock(&m);
	if (++done == n)
		pthread_cond_signal(&all_done);
	pthread_mutex_unlock(&m);
	return NULL;
}

int main(int argc, char **argv)
{
	n = argc > 1 ? atoi(argv[1]) : 4;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (long i = 0; i < n; i++) {
		pthread_t t;
		pthread_create(&t, &attr, work, (void *)i);
	}
	pthread_mutex_lock(&m);
	while (done < n)
		pthread_cond_wait(&all_done, &m);
	pthread_mutex_unlock(&m);
	long s = 0;
	for (int i = 0; i < n; i++)
		s += results[i].sum + results[i].count;
	printf("%ld\n", s);
	return 0;
}
