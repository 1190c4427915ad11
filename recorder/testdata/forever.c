/*
 * forever.c — two threads that update a counter without a lock, slowly,
 * until they are killed; for the kill -9 test. Prints "started" once both
 * threads have updated the counter several times (on a loaded machine a
 * thread may not have run at all right after pthread_create).
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

long hits;

static void *bump(void *arg)
{
	(void)arg;
	for (;;) {
		long h = hits;  /* @read */
		hits = h + 1;   /* @write */
		usleep(500);
	}
	return NULL;
}

int main(void)
{
	pthread_t a, b;
	pthread_create(&a, NULL, bump, NULL);
	pthread_create(&b, NULL, bump, NULL);
	while (*(volatile long *)&hits < 40)
		usleep(200);
	printf("started\n");
	fflush(stdout);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
