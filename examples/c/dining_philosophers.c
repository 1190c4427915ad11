/*
 * dining_philosophers.c — Dijkstra's dining philosophers: five threads,
 * each taking its left fork, then its right one. If all pick up their
 * left fork at once, every one waits for its neighbour forever: a
 * lock-order cycle of five locks and five threads.
 *
 * Philosopher i starts after a stagger of i times the second argument
 * (microseconds), so in the recorded run they eat one after the other and
 * nobody blocks; mcpredict's deadlock analysis predicts the five-thread
 * cycle forks[0] -> forks[1] -> ... -> forks[4] -> forks[0] (one bug: all
 * philosophers run the same two lines). Each philosopher counts its own
 * meals: McPatom reports nothing.
 *
 * mcpredict reproduce directs the cycle: the first philosopher to take
 * its left fork is held before its right one, and so is each philosopher
 * after it, until all five hold their left fork; then each waits for its
 * right one, held by its neighbour. The directed run hangs and is stopped
 * at its time-out: a failed run.
 *
 * mcpredict:args 2 20000
 * mcpredict:reproduce failed
 * mcpredict:expect DL forks[0] held:Lock@left acquire:Lock@right
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define N 5

static pthread_mutex_t forks[N];
static long meals[N];
static long rounds = 2;
static long stagger_us;

static void *philosopher(void *arg)
{
	long i = (long)arg;
	usleep(i * stagger_us);
	for (long r = 0; r < rounds; r++) {
		pthread_mutex_lock(&forks[i]);           /* @left */
		pthread_mutex_lock(&forks[(i + 1) % N]); /* @right */
		meals[i]++;
		pthread_mutex_unlock(&forks[(i + 1) % N]);
		pthread_mutex_unlock(&forks[i]);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		rounds = atol(argv[1]);
	if (argc > 2)
		stagger_us = atol(argv[2]);
	pthread_t t[N];
	for (long i = 0; i < N; i++)
		pthread_mutex_init(&forks[i], NULL);
	for (long i = 0; i < N; i++)
		pthread_create(&t[i], NULL, philosopher, (void *)i);
	long total = 0;
	for (long i = 0; i < N; i++) {
		pthread_join(t[i], NULL);
		total += meals[i];
	}
	printf("%ld meals\n", total);
	return 0;
}
