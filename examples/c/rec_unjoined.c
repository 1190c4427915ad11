/*
 * rec_unjoined.c — main returns without joining a thread that still runs.
 * Correct otherwise: nothing should be reported.
 *
 * A monitor thread samples a progress counter under the lock every
 * millisecond, forever; the worker is joined, the monitor is not: main
 * prints the result and returns while the monitor still runs, and exit()
 * ends it. Whatever the monitor would have done afterwards is not in the
 * trace, so the trace is partial: mcpredict record and mcpredict run both
 * warn, naming the thread and its function:
 *
 *   mcpredict record: warning: thread 3 (monitor) was still running when
 *   the program exited (thread 1 returned from main or called exit
 *   without joining it): …
 *
 *   mcpredict cc -O1 -o rec_unjoined rec_unjoined.c
 *   mcpredict record -o unjoined.csv -- ./rec_unjoined 3
 *   mcpredict run unjoined.csv
 *
 * mcpredict:args 3
 * mcpredict:expect none
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static long progress, samples;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static sem_t started; /* the monitor runs before main returns, however loaded the machine */

static void *worker(void *arg)
{
	long n = (long)arg;
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&lock);
		progress++;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

static void *monitor(void *arg)
{
	(void)arg;
	sem_post(&started);
	for (;;) {
		pthread_mutex_lock(&lock);
		long p = progress;
		samples++;
		pthread_mutex_unlock(&lock);
		(void)p;
		usleep(1000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 3;
	pthread_t w, m;
	sem_init(&started, 0, 0);
	pthread_create(&w, NULL, worker, (void *)n);
	pthread_create(&m, NULL, monitor, NULL);
	pthread_join(w, NULL);
	sem_wait(&started);
	usleep(3000); /* let the monitor sample a few times */
	pthread_mutex_lock(&lock);
	printf("progress %ld after %ld samples\n", progress, samples > 0 ? 1L : 0L);
	pthread_mutex_unlock(&lock);
	return 0; /* BUG (not an atomicity violation): the monitor is not joined */
}
