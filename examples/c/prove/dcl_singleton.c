/*
 * dcl_singleton.c — double-checked locking with one field: get_logger()
 * tests the singleton pointer without the lock and, when it is NULL, takes
 * the lock, tests it again, allocates the logger, publishes the pointer
 * and only then sets the logger's one field, its level. A thread that
 * tests the pointer between the publication and the store takes the fast
 * path and reads a level of 0, which logs nothing. Bug: a read of an
 * unfilled object (the pointer and the field written in one critical
 * section, seen half done by a thread that takes no lock); the workers
 * check the level they see, and main exits 1 when one saw 0.
 *
 * Unlike publish_unfilled.c, the reader reads one field: there is no
 * second field for the atomic-set inference to pair it with, and the
 * pointer and its target are a set only as a publication (written in one
 * critical section, the pointer first, and the pointer read without the
 * lock).
 *
 * Two workers each call get_logger() N times; the second starts STAGGER µs
 * after the first, which has created the logger by then, so the recorded
 * run reads only the level set. Holding the first worker between the
 * publication and the store lets the second read the 0.
 *
 * mcpredict:args 5 20000
 * mcpredict:expect M5 g_logger local:Write@publish local:Write@fill remote:Read@use
 * mcpredict:reproduce failed
 * mcpredict:window get_logger@publish get_logger@fill
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define LEVEL_INFO 3

struct logger {
	int level;
};

static struct logger *g_logger;
static pthread_mutex_t logger_lock = PTHREAD_MUTEX_INITIALIZER;
static long rounds;

__attribute__((noinline)) static struct logger *get_logger(void)
{
	if (!g_logger) { /* @check: BUG, tested without the lock */
		pthread_mutex_lock(&logger_lock);
		if (!g_logger) {
			struct logger *lg = calloc(1, sizeof *lg);
			g_logger = lg; /* @publish: BUG, the logger is published ... */
			lg->level = LEVEL_INFO; /* @fill: ... before its level is set */
		}
		pthread_mutex_unlock(&logger_lock);
	}
	return g_logger;
}

struct result { long silent, logged; };

static void *worker(void *arg)
{
	struct result *r = arg;
	for (long i = 0; i < rounds; i++) {
		struct logger *lg = get_logger();
		if (lg->level != LEVEL_INFO) { /* @use */
			r->silent++;
			continue;
		}
		r->logged++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atol(argv[1]) : 5;
	long stagger = argc > 2 ? atol(argv[2]) : 20000;
	struct result ra = { 0, 0 }, rb = { 0, 0 };
	pthread_t a, b;
	pthread_create(&a, NULL, worker, &ra);
	usleep((useconds_t)stagger); /* not synchronisation: the model has no order from it */
	pthread_create(&b, NULL, worker, &rb);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("logged %ld %ld\n", ra.logged, rb.logged);
	if (ra.silent || rb.silent) {
		fprintf(stderr, "dcl_singleton: a worker saw the logger before its level was set (%ld, %ld times)\n",
			ra.silent, rb.silent);
		return 1;
	}
	return 0;
}
