/*
 * lu_condvar.c — a blocked LU factorisation in the style of SPLASH-2's lu,
 * over a barrier with a generation counter (the other common way to write
 * a condition-variable barrier). Correct: nothing should be reported.
 *
 * Rows are dealt to the threads in blocks of B (block-cyclic). Step K
 * factors the panel of rows [K*B, K*B+B): its owner alone scales the pivot
 * rows and eliminates within the panel; after a barrier every thread
 * reads the pivot rows to eliminate the panel's columns from the rows it
 * owns below the panel; a second barrier ends the step. The pivot rows
 * are never written again once published, and every other row has a
 * single writer, so the barriers are the only synchronisation needed.
 * The barrier waits in a do-while loop on the generation number, so a
 * thread always blocks unless it is the last to arrive.
 *
 *   mcpredict cc -O1 -o lu_condvar lu_condvar.c
 *   mcpredict record -o lu.csv -- ./lu_condvar 2 8
 *   mcpredict run lu.csv
 *
 * mcpredict:args 2 8
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXTHREADS 8
#define MAXN 32
#define B 2 /* block size */

struct gbarrier {
	pthread_mutex_t lock;
	pthread_cond_t turn;
	int waiting;
	int parties;
	unsigned generation;
};

static void barrier_init(struct gbarrier *b, int parties)
{
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->turn, NULL);
	b->waiting = 0;
	b->parties = parties;
	b->generation = 0;
}

static void barrier_wait(struct gbarrier *b)
{
	pthread_mutex_lock(&b->lock);
	unsigned gen = b->generation;
	if (++b->waiting == b->parties) {
		b->waiting = 0;
		b->generation++;
		pthread_cond_broadcast(&b->turn);
	} else {
		do
			pthread_cond_wait(&b->turn, &b->lock);
		while (gen == b->generation);
	}
	pthread_mutex_unlock(&b->lock);
}

static double a[MAXN][MAXN];
static int n, nprocs;
static struct gbarrier bar;

static int owner(int row)
{
	return (row / B) % nprocs;
}

/* Factor the panel rows [k0, k1): done by their owner only. */
static void factor_panel(int k0, int k1)
{
	for (int k = k0; k < k1; k++) {
		double pivot = a[k][k];
		for (int j = k + 1; j < n; j++)
			a[k][j] /= pivot;
		for (int i = k + 1; i < k1; i++) {
			double l = a[i][k];
			for (int j = k + 1; j < n; j++)
				a[i][j] -= l * a[k][j];
		}
	}
}

/* Eliminate the panel's columns from row i, reading the pivot rows. */
static void update_row(int i, int k0, int k1)
{
	for (int k = k0; k < k1; k++) {
		double l = a[i][k];
		for (int j = k + 1; j < n; j++)
			a[i][j] -= l * a[k][j];
	}
}

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	for (int k0 = 0; k0 < n; k0 += B) {
		int k1 = k0 + B < n ? k0 + B : n;
		if (owner(k0) == id)
			factor_panel(k0, k1);
		barrier_wait(&bar);
		for (int i = k1; i < n; i++)
			if (owner(i) == id)
				update_row(i, k0, k1);
		barrier_wait(&bar);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	nprocs = argc > 1 ? atoi(argv[1]) : 2;
	n = argc > 2 ? atoi(argv[2]) : 8;
	if (nprocs < 1 || nprocs > MAXTHREADS)
		nprocs = 2;
	if (n < 1 || n > MAXN)
		n = 8;
	for (int i = 0; i < n; i++) /* diagonally dominant: no pivoting */
		for (int j = 0; j < n; j++)
			a[i][j] = i == j ? 2.0 * n : (double)((i + 2 * j) % 3);
	barrier_init(&bar, nprocs);
	pthread_t th[MAXTHREADS];
	for (long i = 0; i < nprocs; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	for (int i = 0; i < nprocs; i++)
		pthread_join(th[i], NULL);
	double det = 1;
	for (int i = 0; i < n; i++)
		det *= a[i][i];
	printf("%d×%d on %d threads: det %.4g\n", n, n, nprocs, det);
	return 0;
}
