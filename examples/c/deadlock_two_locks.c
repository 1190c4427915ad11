/*
 * deadlock_two_locks.c — two locks taken in opposite orders: a lock-order
 * deadlock that did not happen in the recorded run.
 *
 * A transfer between two accounts locks the source account, then the
 * destination. One thread transfers from A to B, the other from B to A:
 * each can hold its first lock while waiting for the other's. With a
 * stagger (second argument, microseconds) the second thread starts after
 * the first is done, so the recorded run never blocks; mcpredict's
 * deadlock analysis predicts the deadlock from the lock-order graph
 * (lock_a -> lock_b by one thread, lock_b -> lock_a by the other, no
 * gate lock, the acquisitions not ordered by create/join).
 *
 * The balances are always updated under both locks: McPatom reports
 * nothing.
 *
 *   mcpredict cc -O1 -o deadlock_two_locks deadlock_two_locks.c
 *   mcpredict record -o dl.csv -- ./deadlock_two_locks 3 20000
 *   mcpredict run dl.csv
 *
 * mcpredict:args 3 20000
 * mcpredict:expect DL lock_a held:Lock@ab-first acquire:Lock@ab-second held:Lock@ba-first acquire:Lock@ba-second
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static long balance_a = 100, balance_b = 100;
static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;
static long rounds = 3;
static long stagger_us;

static void *a_to_b(void *arg)
{
	(void)arg;
	for (long i = 0; i < rounds; i++) {
		pthread_mutex_lock(&lock_a);   /* @ab-first */
		pthread_mutex_lock(&lock_b);   /* @ab-second */
		balance_a -= 1;
		balance_b += 1;
		pthread_mutex_unlock(&lock_b);
		pthread_mutex_unlock(&lock_a);
	}
	return NULL;
}

static void *b_to_a(void *arg)
{
	(void)arg;
	usleep(stagger_us);
	for (long i = 0; i < rounds; i++) {
		pthread_mutex_lock(&lock_b);   /* @ba-first */
		pthread_mutex_lock(&lock_a);   /* @ba-second */
		balance_b -= 1;
		balance_a += 1;
		pthread_mutex_unlock(&lock_a);
		pthread_mutex_unlock(&lock_b);
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
