/*
 * blocked_exit.c — a thread blocks for good on a lock main holds, and main
 * goes on and exits without releasing it. The waiter's Blocked event
 * belongs where its wait began, before main's later events.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int trying;
static long after;

static void *waiter(void *arg)
{
	(void)arg;
	trying = 1;
	pthread_mutex_lock(&lock); /* never returns */
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(void)
{
	pthread_t w;
	pthread_mutex_lock(&lock);
	pthread_create(&w, NULL, waiter, NULL);
	while (!trying)
		usleep(1000);
	usleep(100000); /* the waiter is now blocked in the lock */
	for (int i = 0; i < 10; i++)
		after++;
	printf("%ld\n", after);
	exit(0);
}
