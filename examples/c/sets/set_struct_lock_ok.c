/*
 * set_struct_lock_ok.c — the latency accumulator of set_struct_invariant.c
 * { count, total } done right: the sampler adds a sample to both fields in
 * one critical section, and the reporter takes the mean, and sometimes
 * resets the accumulator, in one critical section. Every operation holds
 * the lock across both fields, so the invariant (total is the sum of the
 * last count samples) holds whenever the lock is free. Correct: nothing
 * should be reported.
 * mcpredict:args 30
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t acc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	long count;
	long total;
} acc;
static int rounds;
static int bad_means;

static void add_sample(long usec)
{
	pthread_mutex_lock(&acc_lock);
	acc.count++;
	acc.total += usec;
	pthread_mutex_unlock(&acc_lock);
}

/* The mean latency, -1 without samples; resets the accumulator if asked. */
static long take_mean(int reset)
{
	long mean = -1;
	pthread_mutex_lock(&acc_lock);
	if (acc.count > 0)
		mean = acc.total / acc.count;
	if (reset) {
		acc.count = 0;
		acc.total = 0;
	}
	pthread_mutex_unlock(&acc_lock);
	return mean;
}

static void *sampler(void *arg)
{
	for (int i = 0; i < rounds; i++)
		add_sample(100 + i % 7);
	return NULL;
}

static void *reporter(void *arg)
{
	for (int i = 0; i < rounds; i++) {
		long mean = take_mean(i % 10 == 9);
		if (mean >= 0 && (mean < 100 || mean > 106))
			bad_means++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atoi(argv[1]) : 30;
	pthread_t s, r;
	pthread_create(&s, NULL, sampler, NULL);
	pthread_create(&r, NULL, reporter, NULL);
	pthread_join(s, NULL);
	pthread_join(r, NULL);
	printf("%ld samples, %d bad means\n", acc.count, bad_means);
	return 0;
}
