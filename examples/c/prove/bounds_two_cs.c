/*
 * bounds_two_cs.c — a window [lo, hi] of fixed width that a setter moves
 * under one lock (set_range() writes both bounds in one critical
 * section), and that a checker reads through get_lo() and get_hi(), each
 * of which takes the lock. Each bound is locked; the pair is not: the
 * checker can see the old lo with the new hi. Bug: torn read (M1); the
 * checker tests hi - lo == WIDTH, and main exits 1 when it failed.
 *
 * The checker checks N times, then the setter, started STAGGER µs after
 * it, moves the window N times: the recorded checker reads only the first
 * window. Holding the checker between get_lo() and get_hi() lets the
 * setter move the window: the checker reads a hi it never read in the
 * recorded run, and no order of the recorded events gives it that value.
 *
 * mcpredict:args 5 20000
 * mcpredict:reproduce failed
 * mcpredict:window get_lo@getlo get_hi@gethi
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

__attribute__((noinline)) static int get_lo(void)
{
	pthread_mutex_lock(&m);
	int v = lo; /* @getlo: BUG, lo read in one critical section ... */
	pthread_mutex_unlock(&m);
	return v;
}

__attribute__((noinline)) static int get_hi(void)
{
	pthread_mutex_lock(&m);
	int v = hi; /* @gethi: ... and hi in another */
	pthread_mutex_unlock(&m);
	return v;
}

static void *checker(void *arg)
{
	long torn = 0;
	for (long i = 0; i < rounds; i++) {
		int l = get_lo();
		int h = get_hi();
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
		fprintf(stderr, "bounds_two_cs: the checker saw a torn window %ld times\n", (long)torn);
		return 1;
	}
	return 0;
}
