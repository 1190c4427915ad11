/*
 * handoff_nowait.c — jobs handed to a worker through a state variable
 * under a mutex with a condition variable, where the worker usually finds
 * the job already posted and does not wait. Correct: nothing should be
 * reported.
 *
 * main fills in the job, then sets st = WORK under the lock and signals;
 * the worker takes the lock, checks "while (st != WORK) wait", reads the
 * job and writes the result, then sets st = DONE under the lock and
 * signals; main waits for DONE and reads the result before it fills in
 * the next job. The worker is slow to get to each job (the delay, second
 * argument, in microseconds), so in the recorded run it finds st == WORK
 * already and never blocks: the job's data is ordered before its reads by
 * the mutex (main's unlock after st = WORK, the worker's lock before it
 * reads st), not by a signal/wait pair. The same job structure is reused
 * for every job.
 *
 *   mcpredict cc -O1 -o handoff_nowait handoff_nowait.c
 *   mcpredict record -o handoff.csv -- ./handoff_nowait 2 20000
 *   mcpredict run handoff.csv
 *
 * mcpredict:args 2 20000
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MAXITEMS 8

enum state { IDLE, WORK, DONE, QUIT };

static struct job {
	int n;
	int items[MAXITEMS];
	long sum;
	int max;
} job;

static enum state st = IDLE;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static useconds_t delay;

static void set_state(enum state s)
{
	pthread_mutex_lock(&lock);
	st = s;
	pthread_cond_signal(&changed);
	pthread_mutex_unlock(&lock);
}

/* Waits until st is one of a or b and returns it. */
static enum state await_state(enum state a, enum state b)
{
	pthread_mutex_lock(&lock);
	while (st != a && st != b)
		pthread_cond_wait(&changed, &lock);
	enum state s = st;
	pthread_mutex_unlock(&lock);
	return s;
}

static void *worker(void *arg)
{
	(void)arg;
	for (;;) {
		usleep(delay); /* busy elsewhere: main has posted by now */
		if (await_state(WORK, QUIT) == QUIT)
			break;
		long sum = 0;
		int max = job.items[0];
		for (int i = 0; i < job.n; i++) {
			sum += job.items[i];
			if (job.items[i] > max)
				max = job.items[i];
		}
		job.sum = sum;
		job.max = max;
		set_state(DONE);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int jobs = argc > 1 ? atoi(argv[1]) : 2;
	delay = argc > 2 ? (useconds_t)atol(argv[2]) : 20000;
	pthread_t w;
	pthread_create(&w, NULL, worker, NULL);
	for (int k = 0; k < jobs; k++) {
		job.n = 3 + k % (MAXITEMS - 3);
		for (int i = 0; i < job.n; i++)
			job.items[i] = (i * 37 + k * 11) % 50;
		set_state(WORK);
		await_state(DONE, DONE);
		printf("job %d: sum %ld, max %d\n", k, job.sum, job.max);
	}
	set_state(QUIT);
	pthread_join(w, NULL);
	return 0;
}
