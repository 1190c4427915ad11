/*
 * deadlock_gate.c — two locks taken in opposite orders under a common
 * gate lock: no deadlock, and none may be reported.
 *
 * As deadlock_two_locks.c, but every transfer first takes the bank's
 * gate lock. The nested acquisitions are in opposite orders (lock_a ->
 * lock_b, lock_b -> lock_a), yet two threads can never be inside them at
 * once: the gate lock, held by both around the cycle, keeps them apart
 * (Wang's dissertation, §9.4.1: the PDL condition). The deadlock
 * analysis prunes the cycle; McPatom reports nothing either.
 *
 * mcpredict:args 3 20000
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static long balance_a = 100, balance_b = 100;
static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;
static long rounds = 3;
static long stagger_us;

static void *a_to_b(void *arg)
{
	(void)arg;
	for (long i = 0; i < rounds; i++) {
		pthread_mutex_lock(&gate);
		pthread_mutex_lock(&lock_a);
		pthread_mutex_lock(&lock_b);
		balance_a -= 1;
		balance_b += 1;
		pthread_mutex_unlock(&lock_b);
		pthread_mutex_unlock(&lock_a);
		pthread_mutex_unlock(&gate);
	}
	return NULL;
}

static void *b_to_a(void *arg)
{
	(void)arg;
	usleep(stagger_us);
	for (long i = 0; i < rounds; i++) {
		pthread_mutex_lock(&gate);
		pthread_mutex_lock(&lock_b);
		pthread_mutex_lock(&lock_a);
		balance_b -= 1;
		balance_a += 1;
		pthread_mutex_unlock(&lock_a);
		pthread_mutex_unlock(&lock_b);
		pthread_mutex_unlock(&gate);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		rounds = atol(argv[1]);
	if (argc > 2)
		stagger_us = atol(argv[2]);
	pthread_t t1, t2;
	pthread_create(&t1, NULL, a_to_b, NULL);
	pthread_create(&t2, NULL, b_to_a, NULL);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	printf("a=%ld b=%ld\n", balance_a, balance_b);
	return 0;
}
