/*
 * bench.c — a memory-bound kernel for the recorder's overhead benchmark:
 * threads multiply row blocks of a global matrix with a global vector,
 * in barrier-separated rounds. It prints the time spent in the kernel
 * (program start-up and exit are not part of the slowdown).
 *
 *   ./bench THREADS ROUNDS
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N 256
#define MAXT 16

double a[N][N], x[N], y[N];
static int nthreads, rounds;
static pthread_barrier_t bar;

static void *worker(void *arg)
{
	long id = (long)arg;
	int lo = (int)id * N / nthreads, hi = ((int)id + 1) * N / nthreads;
	for (int r = 0; r < rounds; r++) {
		for (int i = lo; i < hi; i++) {
			double s = 0;
			for (int j = 0; j < N; j++)
				s += a[i][j] * x[j];
			y[i] = s;
		}
		pthread_barrier_wait(&bar);
		if (id == 0)
			for (int i = 0; i < N; i++)
				x[i] = y[i] / N;
		pthread_barrier_wait(&bar);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	nthreads = argc > 1 ? atoi(argv[1]) : 2;
	rounds = argc > 2 ? atoi(argv[2]) : 4;
	if (nthreads < 1 || nthreads > MAXT)
		nthreads = 2;
	for (int i = 0; i < N; i++) {
		x[i] = 1;
		for (int j = 0; j < N; j++)
			a[i][j] = (i + j) % 7;
	}
	pthread_barrier_init(&bar, NULL, (unsigned)nthreads);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_t th[MAXT];
	for (long i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long ns = (t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec);
	printf("kernel_ns %ld y0 %.1f\n", ns, y[0]);
	return 0;
}
