/*
 * set_struct_invariant.c — a latency accumulator { count, total } whose
 * invariant spans both fields: total is the sum of the last count samples.
 * The sampler adds a sample in two critical sections, first the count, then
 * the total; a reporter takes the mean in one critical section and
 * sometimes resets the accumulator, also in one critical section. Each
 * field is locked; the pair is not: the reporter can divide the old total
 * by the new count (M5), and a reset between the sampler's two steps
 * leaves count 0 with a non-zero total (M3). Bug: half-done update read
 * and torn update.
 * mcpredict:args 30
 * mcpredict:expect M5|M6 acc.count+acc.total local:Write@count local:Write@total
 * mcpredict:expect M3|M4 acc.count+acc.total local:Write@count local:Write@total
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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
	acc.count++; /* @count */
	pthread_mutex_unlock(&acc_lock);

	pthread_mutex_lock(&acc_lock);
	acc.total += usec; /* @total */
	pthread_mutex_unlock(&acc_lock);
}

/* The mean latency, -1 without samples; resets the accumulator if asked. */
static long take_mean(int reset)
{
	long mean = -1;
	pthread_mutex_lock(&acc_lock);
	if (acc.count > 0) /* @readcount */
		mean = acc.total / acc.count; /* @readtotal */
	if (reset) {
		acc.count = 0; /* @resetcount */
		acc.total = 0; /* @resettotal */
	}
	pthread_mutex_unlock(&acc_lock);
	return mean;
}

static void *sampler(void *arg)
{
	for (int i = 0; i < rounds; i++) {
		add_sample(100 + i % 7);
		usleep(30); /* take the next sample */
	}
	return NULL;
}

static void *reporter(void *arg)
{
	for (int i = 0; i < rounds; i++) {
		long mean = take_mean(i % 5 == 4);
		if (mean >= 0 && (mean < 100 || mean > 106))
			bad_means++;
		usleep(30); /* report now and then */
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
