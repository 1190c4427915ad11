/*
 * dcl_singleton_ok.c — the logger of dcl_singleton.c with double-checked
 * locking done right: the level is set before the pointer is published,
 * and the pointer is stored with release and loaded with acquire
 * semantics (__atomic_store_n, __atomic_load_n), so a worker that sees the
 * pointer sees the level set. Correct.
 *
 * mcpredict:args 5 20000
 * mcpredict:expect none
 * mcpredict:reproduce clean
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
	struct logger *lg = __atomic_load_n(&g_logger, __ATOMIC_ACQUIRE); /* @check */
	if (!lg) {
		pthread_mutex_lock(&logger_lock);
		lg = __atomic_load_n(&g_logger, __ATOMIC_RELAXED);
		if (!lg) {
			lg = calloc(1, sizeof *lg);
			lg->level = LEVEL_INFO; /* @fill */
			__atomic_store_n(&g_logger, lg, __ATOMIC_RELEASE); /* @publish */
		}
		pthread_mutex_unlock(&logger_lock);
	}
	return lg;
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
		fprintf(stderr, "dcl_singleton_ok: a worker saw the logger before its level was set (%ld, %ld times)\n",
			ra.silent, rb.silent);
		return 1;
	}
	return 0;
}
