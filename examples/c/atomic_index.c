/*
 * atomic_index.c — a dynamically scheduled parallel loop: threads claim
 * indices with an atomic fetch-and-add and write their own elements; main
 * reads the results after joining. Correct.
 * mcpredict:args 4 400
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int next;
static int n;
static double *in, *out;

static void *work(void *a)
{
	for (;;) {
		int i = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED);
		if (i >= n)
			break;
		out[i] = in[i] * 2 + (i > 0 ? in[i - 1] : 0);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int nt = argc > 1 ? atoi(argv[1]) : 4;
	n = argc > 2 ? atoi(argv[2]) : 400;
	in = malloc(n * sizeof *in);
	out = malloc(n * sizeof *out);
	for (int i = 0; i < n; i++)
		in[i] = i;
	pthread_t t[16];
	for (int i = 0; i < nt; i++)
		pthread_create(&t[i], NULL, work, NULL);
	for (int i = 0; i < nt; i++)
		pthread_join(t[i], NULL);
	double s = 0;
	for (int i = 0; i < n; i++)
		s += out[i];
	printf("%f\n", s);
	return 0;
}
