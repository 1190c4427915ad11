/*
 * flag_generation.c — main publishes work rounds by bumping a generation
 * number under a mutex and broadcasting; workers wait for a new generation
 * with pthread_cond_timedwait in a loop, process the round's shared
 * parameters and report back with a count under the mutex. Correct.
 * mcpredict:args 3 10
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go = PTHREAD_COND_INITIALIZER, back = PTHREAD_COND_INITIALIZER;
static int generation, finished, stop, nthreads;
static struct { int scale; int offset; } params;
static long out[8];

static void *work(void *a)
{
	long id = (long)a;
	int seen = 0;
	for (;;) {
		pthread_mutex_lock(&m);
		while (generation == seen && !stop) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 1000000;
			if (ts.tv_nsec >= 1000000000) { ts.tv_sec++; ts.tv_nsec -= 1000000000; }
			pthread_cond_timedwait(&go, &m, &ts);
		}
		int quit = stop;
		seen = generation;
		pthread_mutex_unlock(&m);
		if (quit)
			break;
		out[id] += params.scale * id + params.offset;
		pthread_mutex_lock(&m);
		finished++;
		pthread_cond_signal(&back);
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	nthreads = argc > 1 ? atoi(argv[1]) : 3;
	int rounds = argc > 2 ? atoi(argv[2]) : 10;
	pthread_t t[8];
	for (long i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, work, (void *)i);
	for (int r = 0; r < rounds; r++) {
		params.scale = r;
		params.offset = r * 2;
		pthread_mutex_lock(&m);
		finished = 0;
		generation++;
		pthread_cond_broadcast(&go);
		while (finished < nthreads)
			pthread_cond_wait(&back, &m);
		pthread_mutex_unlock(&m);
	}
	pthread_mutex_lock(&m);
	stop = 1;
	pthread_cond_broadcast(&go);
	pthread_mutex_unlock(&m);
	long s = 0;
	for (int i = 0; i < nthreads; i++) {
		pthread_join(t[i], NULL);
		s += out[i];
	}
	printf("%ld\n", s);
	return 0;
}
