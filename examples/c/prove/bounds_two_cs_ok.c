/*
 * bounds_two_cs_ok.c — the window of bounds_two_cs.c read whole: the
 * checker takes both bounds through get_range(), one critical section, so
 * it sees either the old window or the new one, never half of each.
 * Correct.
 *
 * mcpredict:args 5 20000
 * mcpredict:reproduce clean
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define WIDTH 10

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int lo = 0, hi = WIDTH;
static long rounds;

__attribute__((noinline)) static void set_range(int l, int h)
{
	pthread_mutex_lock(&m);
	lo = l; /* @setlo */
	hi = h; /* @sethi */
	pthread_mutex_unlock(&m);
}

__attribute__((noinline)) static void get_range(int *l, int *h)
{
	pthread_mutex_lock(&m);
	*l = lo; /* @getlo */
	*h = hi; /* @gethi */
	pthread_mutex_unlock(&m);
}

static void *checker(void *arg)
{
	long torn = 0;
	for (long i = 0; i < rounds; i++) {
		int l, h;
		get_range(&l, &h);
		if (h - l != WIDTH)
			torn++;
	}
	return (void *)torn;
}

static void *setter(void *arg)
{
	for (int i = 1; i <= rounds; i++)
		set_range(100 * i, 100 * i + WIDTH);
	return NULL;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atol(argv[1]) : 5;
	long stagger = argc > 2 ? atol(argv[2]) : 20000;
	pthread_t c, s;
	pthread_create(&c, NULL, checker, NULL);
	usleep((useconds_t)stagger); /* not synchronisation: the model has no order from it */
	pthread_create(&s, NULL, setter, NULL);
	void *torn;
	pthread_join(c, &torn);
	pthread_join(s, NULL);
	printf("window [%d, %d]\n", lo, hi);
	if (torn) {
		fprintf(stderr, "bounds_two_cs_ok: the checker saw a torn window %ld times\n", (long)torn);
		return 1;
	}
	return 0;
}
