/*
 * barrier_condvar.c — an fft-like phased computation over a barrier made
 * of a mutex and a condition variable, written exactly as SPLASH-2's
 * pthread macros (c.m4.null.POSIX) write BARRIER. Correct: nothing should
 * be reported.
 *
 * The data is an n×n matrix; thread t owns rows [lo, hi) of both x and y.
 * The phases are those of fft's six-step algorithm, with a Walsh-Hadamard
 * butterfly standing in for the complex FFT (same access pattern, no
 * twiddle factors): each thread writes its own rows, the barrier, then a
 * transpose reads the other threads' rows, the barrier, and so on. The
 * barrier orders every phase after the previous one — also for the last
 * thread to arrive, which does not wait: it saw the counter reach n,
 * which every other thread incremented under the mutex after its work of
 * the phase. A checksum is reduced under a second mutex at the end.
 *
 *   mcpredict cc -O1 -o barrier_condvar barrier_condvar.c
 *   mcpredict record -o barrier.csv -- ./barrier_condvar 2 8
 *   mcpredict run barrier.csv
 *
 * mcpredict:args 2 8
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXTHREADS 8
#define MAXN 32

/* SPLASH-2's barrier: BARDEC(bar) and BARRIER(bar, n). */
struct barrier {
	pthread_mutex_t mutex;
	pthread_cond_t cv;
	unsigned long counter;
	unsigned long cycle;
};

#define BARRIER(bar, n)                                                  \
	{                                                                \
		unsigned long Cycle;                                     \
		pthread_mutex_lock(&(bar).mutex);                        \
		Cycle = (bar).cycle;                                     \
		if (++(bar).counter != (unsigned long)(n)) {             \
			while (Cycle == (bar).cycle)                     \
				pthread_cond_wait(&(bar).cv, &(bar).mutex); \
		} else {                                                 \
			(bar).counter = 0;                               \
			(bar).cycle = !(bar).cycle;                      \
			pthread_cond_broadcast(&(bar).cv);               \
		}                                                        \
		pthread_mutex_unlock(&(bar).mutex);                      \
	}

static struct barrier phase_bar = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
static double x[MAXN][MAXN], y[MAXN][MAXN];
static int nprocs, n;
static double checksum;
static pthread_mutex_t sum_lock = PTHREAD_MUTEX_INITIALIZER;

/* In-place Walsh-Hadamard transform of one row: log2(n) butterfly passes. */
static void butterflies(double *row)
{
	for (int len = 1; len < n; len <<= 1)
		for (int i = 0; i < n; i += len << 1)
			for (int j = i; j < i + len; j++) {
				double a = row[j], b = row[j + len];
				row[j] = a + b;
				row[j + len] = a - b;
			}
}

static void transpose(double (*dst)[MAXN], double (*src)[MAXN], int lo, int hi)
{
	for (int i = lo; i < hi; i++)
		for (int j = 0; j < n; j++)
			dst[i][j] = src[j][i];
}

static void *slave(void *arg)
{
	long id = (long)arg;
	int lo = (int)id * n / nprocs, hi = ((int)id + 1) * n / nprocs;

	for (int i = lo; i < hi; i++) /* initialise my rows */
		for (int j = 0; j < n; j++)
			x[i][j] = (double)((i * 7 + j * 3) % 5);
	BARRIER(phase_bar, nprocs);
	transpose(y, x, lo, hi); /* reads every thread's rows of x */
	BARRIER(phase_bar, nprocs);
	for (int i = lo; i < hi; i++)
		butterflies(y[i]);
	BARRIER(phase_bar, nprocs);
	transpose(x, y, lo, hi);
	BARRIER(phase_bar, nprocs);
	for (int i = lo; i < hi; i++)
		butterflies(x[i]);

	double local = 0;
	for (int i = lo; i < hi; i++)
		for (int j = 0; j < n; j++)
			local += x[i][j] * (i + j + 1);
	pthread_mutex_lock(&sum_lock);
	checksum += local;
	pthread_mutex_unlock(&sum_lock);
	return NULL;
}

int main(int argc, char **argv)
{
	nprocs = argc > 1 ? atoi(argv[1]) : 2;
	n = argc > 2 ? atoi(argv[2]) : 8;
	if (nprocs < 1 || nprocs > MAXTHREADS)
		nprocs = 2;
	if (n < 2 || n > MAXN || (n & (n - 1)) != 0 || n < nprocs)
		n = 8;
	pthread_t th[MAXTHREADS];
	for (long i = 1; i < nprocs; i++)
		pthread_create(&th[i], NULL, slave, (void *)i);
	slave((void *)0); /* the main thread is process 0, as in SPLASH-2 */
	for (int i = 1; i < nprocs; i++)
		pthread_join(th[i], NULL);
	printf("%d×%d on %d threads: checksum %.1f\n", n, n, nprocs, checksum);
	return 0;
}
