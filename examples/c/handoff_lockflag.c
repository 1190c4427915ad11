/*
 * handoff_lockflag.c — requests handed to a worker through flags that
 * both sides read and write only under one mutex, polled with
 * sched_yield() (no condition variable). Correct: nothing should be
 * reported.
 *
 * main fills in the request outside the lock, then sets pending = 1 under
 * the lock; the worker polls pending under the lock, and once it is set
 * reads the request, writes the answer and sets pending = 0 and answered
 * = 1, under the lock; main polls answered, then reads the answer and
 * prepares the next request in the same structure. The mutex orders each
 * side's accesses after the other side's: a flag seen set was set in an
 * earlier critical section, after the data was written.
 *
 *   mcpredict cc -O1 -o handoff_lockflag handoff_lockflag.c
 *   mcpredict record -o lockflag.csv -- ./handoff_lockflag 3
 *   mcpredict run lockflag.csv
 *
 * mcpredict:args 3
 * mcpredict:expect none
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

static struct {
	int a, b;     /* request */
	long product; /* answer */
} req;
static int pending, answered, quit;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Waits until *flag is set (read under the lock). */
static void poll_flag(int *flag)
{
	for (;;) {
		pthread_mutex_lock(&lock);
		int set = *flag;
		pthread_mutex_unlock(&lock);
		if (set)
			return;
		sched_yield();
	}
}

static void *worker(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&lock);
		int work = pending, stop = quit;
		pthread_mutex_unlock(&lock);
		if (stop)
			break;
		if (!work) {
			sched_yield();
			continue;
		}
		long p = (long)req.a * req.b;
		req.product = p;
		pthread_mutex_lock(&lock);
		pending = 0;
		answered = 1;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	pthread_t w;
	pthread_create(&w, NULL, worker, NULL);
	for (int i = 1; i <= n; i++) {
		req.a = i;
		req.b = i + 10;
		pthread_mutex_lock(&lock);
		answered = 0;
		pending = 1;
		pthread_mutex_unlock(&lock);
		poll_flag(&answered);
		printf("%d × %d = %ld\n", req.a, req.b, req.product);
	}
	pthread_mutex_lock(&lock);
	quit = 1;
	pthread_mutex_unlock(&lock);
	pthread_join(w, NULL);
	return 0;
}
