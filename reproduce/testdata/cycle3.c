/*
 * cycle3.c — three threads, each taking its lock and then the next
 * thread's: a -> b, b -> c, c -> a. Thread i starts after i times the
 * first argument (microseconds), so a run with a stagger never blocks.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER, c = PTHREAD_MUTEX_INITIALIZER;
static long stagger_us, done[3];

static void *ab(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&a); /* @ab-held */
	pthread_mutex_lock(&b); /* @ab-acquire */
	done[0]++;
	pthread_mutex_unlock(&b);
	pthread_mutex_unlock(&a);
	return NULL;
}

static void *bc(void *arg)
{
	(void)arg;
	usleep(stagger_us);
	pthread_mutex_lock(&b); /* @bc-held */
	pthread_mutex_lock(&c); /* @bc-acquire */
	done[1]++;
	pthread_mutex_unlock(&c);
	pthread_mutex_unlock(&b);
	return NULL;
}

static void *ca(void *arg)
{
	(void)arg;
	usleep(2 * stagger_us);
	pthread_mutex_lock(&c); /* @ca-held */
	pthread_mutex_lock(&a); /* @ca-acquire */
	done[2]++;
	pthread_mutex_unlock(&a);
	pthread_mutex_unlock(&c);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		stagger_us = atol(argv[1]);
	pthread_t t[3];
	pthread_create(&t[0], NULL, ab, NULL);
	pthread_create(&t[1], NULL, bc, NULL);
	pthread_create(&t[2], NULL, ca, NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("%ld\n", done[0] + done[1] + done[2]);
	return 0;
}
