/*
 * hldr_bug.c — a high-level data race (Pessanha, Dias and Lourenço, Fig.
 * 1(a)). A mover thread moves a point with move_to(), which writes x and
 * y in one critical section; a tracker asks in_range() whether the point
 * is within reach, reading x through get_x() and y through get_y(), two
 * critical sections, and combining them. Every access is locked; the
 * split is not: the tracker can combine the old x with the new y, a
 * position the point never had.
 * Bug: split read of an atomic update (hldr read); the atomic-set
 * analysis sees the same torn read (M1).
 * mcpredict:args 40
 * mcpredict:expect M1|M2 pos.x+pos.y local:Read@getx local:Read@gety
 * mcpredict:reports hldr read
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static struct {
	int x, y;
} pos;
static int rounds;

__attribute__((noinline)) static void move_to(int x, int y)
{
	pthread_mutex_lock(&m);
	pos.x = x; /* @setx */
	pos.y = y; /* @sety */
	pthread_mutex_unlock(&m);
}

__attribute__((noinline)) static int get_x(void)
{
	pthread_mutex_lock(&m);
	int v = pos.x; /* @getx */
	pthread_mutex_unlock(&m);
	return v;
}

__attribute__((noinline)) static int get_y(void)
{
	pthread_mutex_lock(&m);
	int v = pos.y; /* @gety */
	pthread_mutex_unlock(&m);
	return v;
}

/* in_range combines x and y: BUG, read in two critical sections. */
__attribute__((noinline)) static int in_range(int r)
{
	int x = get_x();
	int y = get_y();
	return x * x + y * y <= r * r;
}

static void *mover(void *a)
{
	for (int i = 0; i < rounds; i++) {
		move_to(i, rounds - i);
		usleep(50);
	}
	return NULL;
}

static void *tracker(void *a)
{
	long near = 0;
	for (int i = 0; i < rounds; i++) {
		near += in_range(rounds);
		usleep(50);
	}
	return (void *)near;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atoi(argv[1]) : 40;
	pthread_t a, b;
	void *near;
	pthread_create(&a, NULL, mover, NULL);
	pthread_create(&b, NULL, tracker, NULL);
	pthread_join(a, NULL);
	pthread_join(b, &near);
	printf("in range %ld of %d times\n", (long)near, rounds);
	return 0;
}
