/*
 * set_one_lock_ok.c — a robot's position { x, y } on a diagonal track: it
 * always satisfies x == y. Two motor threads move it, each step changing x
 * and y in one critical section; a display thread reads both coordinates
 * in one critical section. The pair is always written and read under the
 * one lock held across both fields. Correct: nothing should be reported.
 * mcpredict:args 2 30
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t pos_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	int x;
	int y;
} pos;
static int nmotors, rounds;

static void move_by(int d)
{
	pthread_mutex_lock(&pos_lock);
	pos.x += d;
	pos.y += d;
	pthread_mutex_unlock(&pos_lock);
}

static void get_pos(int *x, int *y)
{
	pthread_mutex_lock(&pos_lock);
	*x = pos.x;
	*y = pos.y;
	pthread_mutex_unlock(&pos_lock);
}

static void *motor(void *arg)
{
	int d = (long)arg % 2 ? -1 : 2;
	for (int i = 0; i < rounds; i++)
		move_by(d);
	return NULL;
}

static void *display(void *arg)
{
	int off_track = 0;
	for (int i = 0; i < rounds; i++) {
		int x, y;
		get_pos(&x, &y);
		if (x != y)
			off_track++;
	}
	return (void *)(long)off_track;
}

int main(int argc, char **argv)
{
	nmotors = argc > 1 ? atoi(argv[1]) : 2;
	rounds = argc > 2 ? atoi(argv[2]) : 30;
	pthread_t d, m[8];
	void *off;
	pthread_create(&d, NULL, display, NULL);
	for (long i = 0; i < nmotors; i++)
		pthread_create(&m[i], NULL, motor, (void *)i);
	for (int i = 0; i < nmotors; i++)
		pthread_join(m[i], NULL);
	pthread_join(d, &off);
	printf("at (%d, %d), %ld readings off the track\n", pos.x, pos.y, (long)off);
	return 0;
}
