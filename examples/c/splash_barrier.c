/*
 * splash_barrier.c — a barrier-phased kernel in the style of SPLASH-2's
 * ocean/lu: a 1-D Jacobi relaxation. Correct: nothing should be reported.
 *
 * Each thread owns a slice of the grid. In every iteration it computes its
 * slice of next[] from grid[] (reading its neighbours' boundary cells),
 * waits at a barrier, copies next[] back into its slice of grid[], and
 * waits again; the largest change is reduced under a mutex. Accesses of
 * different phases are ordered by the barriers, so no interleaving of the
 * model breaks an atomic region (the paper reports no false positives on
 * SPLASH-2, and neither must we).
 *
 *   mcpredict cc -O1 -o splash_barrier splash_barrier.c
 *   mcpredict record -o splash.csv -- ./splash_barrier 2 3
 *   mcpredict run splash.csv
 *
 * mcpredict:args 2 3
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define N 16
#define MAXTHREADS 8

static double grid[N + 2], next[N + 2];
static double maxdiff;
static int nthreads, iters;
static pthread_barrier_t phase;
static pthread_mutex_t difflock = PTHREAD_MUTEX_INITIALIZER;

static void *slave(void *arg)
{
	long id = (long)arg;
	int lo = 1 + (int)id * N / nthreads;
	int hi = 1 + ((int)id + 1) * N / nthreads;
	for (int it = 0; it < iters; it++) {
		double local = 0;
		for (int i = lo; i < hi; i++) {
			next[i] = (grid[i - 1] + grid[i] + grid[i + 1]) / 3;
			double d = next[i] - grid[i];
			if (d < 0)
				d = -d;
			if (d > local)
				local = d;
		}
		pthread_barrier_wait(&phase);
		for (int i = lo; i < hi; i++)
			grid[i] = next[i];
		pthread_mutex_lock(&difflock);
		if (local > maxdiff)
			maxdiff = local;
		pthread_mutex_unlock(&difflock);
		pthread_barrier_wait(&phase);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	nthreads = argc > 1 ? atoi(argv[1]) : 2;
	iters = argc > 2 ? atoi(argv[2]) : 3;
	if (nthreads < 1 || nthreads > MAXTHREADS)
		nthreads = 2;
	for (int i = 0; i < N + 2; i++)
		grid[i] = i % 3;
	pthread_barrier_init(&phase, NULL, (unsigned)nthreads);
	pthread_t th[MAXTHREADS];
	for (long i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, slave, (void *)i);
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&phase);
	printf("max change in the last iterations %.3f, grid[N/2] %.3f\n", maxdiff, grid[N / 2]);
	return 0;
}
