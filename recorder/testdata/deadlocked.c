/*
 * deadlocked.c — two threads that take two locks in opposite orders and
 * certainly deadlock: each takes its first lock, all meet at a barrier,
 * then each waits for the other's lock forever. Prints "started" when both
 * hold their first lock; the test kills it.
 */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t ready;

static void *forward(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock_a);   /* @held-a */
	pthread_barrier_wait(&ready);
	pthread_mutex_lock(&lock_b);   /* @wait-b */
	pthread_mutex_unlock(&lock_b);
	pthread_mutex_unlock(&lock_a);
	return NULL;
}

static void *backward(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock_b);   /* @held-b */
	pthread_barrier_wait(&ready);
	pthread_mutex_lock(&lock_a);   /* @wait-a */
	pthread_mutex_unlock(&lock_a);
	pthread_mutex_unlock(&lock_b);
	return NULL;
}

int main(void)
{
	pthread_t a, b;
	pthread_barrier_init(&ready, NULL, 3);
	pthread_create(&a, NULL, forward, NULL);
	pthread_create(&b, NULL, backward, NULL);
	pthread_barrier_wait(&ready);
	printf("started\n");
	fflush(stdout);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
