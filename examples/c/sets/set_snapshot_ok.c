/*
 * set_snapshot_ok.c — a throughput meter { bytes, usec }: transfer threads
 * account each chunk, adding its size and its duration in one critical
 * section; a reporter copies the whole meter into a local struct under the
 * lock, in one critical section, and computes the rate from that snapshot
 * after releasing the lock. Both fields are read as one consistent copy.
 * Correct: nothing should be reported.
 * mcpredict:args 2 30
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct meter {
	long bytes;
	long usec;
};

static pthread_mutex_t meter_lock = PTHREAD_MUTEX_INITIALIZER;
static struct meter meter;
static int ntransfers, rounds;

static void meter_add(long bytes, long usec)
{
	pthread_mutex_lock(&meter_lock);
	meter.bytes += bytes;
	meter.usec += usec;
	pthread_mutex_unlock(&meter_lock);
}

static struct meter meter_snapshot(void)
{
	pthread_mutex_lock(&meter_lock);
	struct meter snap = meter;
	pthread_mutex_unlock(&meter_lock);
	return snap;
}

static void *transfer(void *arg)
{
	long chunk = 1024 << (long)arg;
	for (int i = 0; i < rounds; i++)
		meter_add(chunk, 8 + i % 3);
	return NULL;
}

static void *reporter(void *arg)
{
	long last = 0;
	for (int i = 0; i < rounds; i++) {
		struct meter s = meter_snapshot();
		if (s.usec > 0)
			last = s.bytes / s.usec; /* bytes per microsecond */
	}
	return (void *)last;
}

int main(int argc, char **argv)
{
	ntransfers = argc > 1 ? atoi(argv[1]) : 2;
	rounds = argc > 2 ? atoi(argv[2]) : 30;
	pthread_t r, t[8];
	void *rate;
	pthread_create(&r, NULL, reporter, NULL);
	for (long i = 0; i < ntransfers; i++)
		pthread_create(&t[i], NULL, transfer, (void *)i);
	for (int i = 0; i < ntransfers; i++)
		pthread_join(t[i], NULL);
	pthread_join(r, &rate);
	printf("%ld bytes in %ld us, last rate %ld B/us\n", meter.bytes, meter.usec, (long)rate);
	return 0;
}
