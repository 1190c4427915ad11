/*
 * set_range_bounds.c — a range [lo, hi] that a setter updates under one lock,
 * and that a checker reads through get_lo() and get_hi(), each of which
 * takes the lock. Each variable is locked; the pair is not: the checker can
 * see the old lo with the new hi. Bug: torn read (M1).
 * mcpredict:args 30
 * mcpredict:expect M1|M2 lo+hi local:Read@getlo local:Read@gethi
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int lo = 0, hi = 10;
static int rounds;
static int torn;

static void set_range(int l, int h)
{
	pthread_mutex_lock(&m);
	lo = l; /* @setlo */
	hi = h; /* @sethi */
	pthread_mutex_unlock(&m);
}

static int get_lo(void)
{
	pthread_mutex_lock(&m);
	int v = lo; /* @getlo */
	pthread_mutex_unlock(&m);
	return v;
}

static int get_hi(void)
{
	pthread_mutex_lock(&m);
	int v = hi; /* @gethi */
	pthread_mutex_unlock(&m);
	return v;
}

static void *checker(void *a)
{
	for (int i = 0; i < rounds; i++) {
		int l = get_lo();
		int h = get_hi();
		if (h - l != 10)
			torn++;
		usleep(30); /* the next check */
	}
	return NULL;
}

static void *setter(void *a)
{
	for (int i = 1; i <= rounds; i++) {
		set_range(i * 10, i * 10 + 10);
		usleep(20); /* the next reconfiguration */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atoi(argv[1]) : 30;
	pthread_t c, s;
	pthread_create(&c, NULL, checker, NULL);
	pthread_create(&s, NULL, setter, NULL);
	pthread_join(c, NULL);
	pthread_join(s, NULL);
	printf("%d torn\n", torn);
	return 0;
}
