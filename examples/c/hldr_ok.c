/*
 * hldr_ok.c — the point of hldr_bug.c read whole: get_pos() takes x and y
 * in one critical section, so in_range() combines coordinates of one
 * position. The views of the two threads are {x, y} on both sides.
 * mcpredict:args 40
 * mcpredict:expect none
 * mcpredict:reports hldr none
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
	pos.x = x;
	pos.y = y;
	pthread_mutex_unlock(&m);
}

__attribute__((noinline)) static void get_pos(int *x, int *y)
{
	pthread_mutex_lock(&m);
	*x = pos.x;
	*y = pos.y;
	pthread_mutex_unlock(&m);
}

__attribute__((noinline)) static int in_range(int r)
{
	int x, y;
	get_pos(&x, &y);
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
