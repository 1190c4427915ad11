/*
 * spin_barrier.c — a sense-reversing barrier on C11 atomics between phases
 * of a stencil: each thread writes its own cells, then reads its
 * neighbours' after the barrier. Correct.
 * mcpredict:args 4 20
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static atomic_int arrived;
static atomic_int sense;
static int nthreads, steps;
static double cur[64], nxt[64];

static void barrier(int *local)
{
	*local = !*local;
	if (atomic_fetch_add_explicit(&arrived, 1, memory_order_acq_rel) == nthreads - 1) {
		atomic_store_explicit(&arrived, 0, memory_order_relaxed);
		atomic_store_explicit(&sense, *local, memory_order_release);
	} else {
		while (atomic_load_explicit(&sense, memory_order_acquire) != *local)
			;
	}
}

static void *work(void *a)
{
	long id = (long)a;
	int local = 0;
	int per = 64 / nthreads, lo = id * per, hi = lo + per;
	for (int s = 0; s < steps; s++) {
		for (int i = lo; i < hi; i++)
			nxt[i] = (cur[(i + 63) % 64] + cur[i] + cur[(i + 1) % 64]) / 3;
		barrier(&local);
		for (int i = lo; i < hi; i++)
			cur[i] = nxt[i];
		barrier(&local);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	nthreads = argc > 1 ? atoi(argv[1]) : 4;
	steps = argc > 2 ? atoi(argv[2]) : 20;
	for (int i = 0; i < 64; i++)
		cur[i] = i;
	pthread_t t[16];
	for (long i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, work, (void *)i);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	printf("%f\n", cur[5]);
	return 0;
}
