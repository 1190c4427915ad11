/* A worker with deferred cancellation updates a counter unlocked (the
 * lost update: main writes it in between), then notes that it got past the
 * update before its first cancellation point. main cancels it right after
 * its own write, and exits 1 only when the worker was cancelled before
 * the note: no run of the program itself can be (there is no cancellation
 * point in between), so a failed directed run would be the schedule's own
 * doing — a hold that the cancellation ends. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static long count;
static volatile int noted;

__attribute__((noinline)) static void update(void)
{
	long c = count; /* the read */
	count = c + 1;  /* the write */
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, NULL);
	update();
	noted = 1;
	pthread_testcancel();
	return NULL;
}

int main(int argc, char **argv)
{
	long stagger = argc > 1 ? atol(argv[1]) : 0;
	pthread_t w;
	pthread_create(&w, NULL, worker, NULL);
	usleep((useconds_t)stagger);
	count = 10; /* the remote write */
	pthread_cancel(w);
	pthread_join(w, NULL);
	if (!noted) {
		fprintf(stderr, "the worker was cancelled inside its update\n");
		return 1;
	}
	return 0;
}
