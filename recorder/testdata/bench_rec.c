/*
 * bench_rec.c — a memory-bound kernel for the recording-speed benchmark
 * (BenchmarkRecordSpeed, issue 38): two threads each load and store a
 * shared global array, millions of times, and take a mutex now and then
 * to add to a shared total. Every load and store of the array is a
 * recorded event (about 2 per inner iteration), so the trace is as large
 * as the kernel is fast.
 *
 *   ./bench_rec [ROUNDS]   (default 160: about 5.3 million recorded events)
 *
 * It prints the time spent in the kernel, as bench.c does.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N 8192 /* longs: 64 KiB, in L2 */
#define LOCK_EVERY 1024

long shared[N];
long total;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int rounds;

static void *worker(void *arg)
{
	long id = (long)arg;
	long sum = 0;
	for (int r = 0; r < rounds; r++) {
		/* The threads walk the array from opposite ends. */
		for (int i = 0; i < N; i++) {
			int j = id ? N - 1 - i : i;
			shared[j] += i ^ r;
			if ((i & (LOCK_EVERY - 1)) == LOCK_EVERY - 1) {
				pthread_mutex_lock(&lock);
				total += shared[j];
				pthread_mutex_unlock(&lock);
			}
		}
		sum += r;
	}
	return (void *)sum;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atoi(argv[1]) : 160;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_t th[2];
	for (long i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long ns = (t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec);
	printf("kernel_ns %ld total %ld\n", ns, total);
	return 0;
}
