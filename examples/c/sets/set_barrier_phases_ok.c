/*
 * set_barrier_phases_ok.c — a small particle simulation: positions pos[]
 * and velocities vel[] belong together (a particle's state is the pair).
 * Each thread owns a slice of the particles. In the first phase of a step
 * every thread updates the velocities of its particles from all positions;
 * in the second it moves its particles by their new velocities. The phases
 * are separated by pthread_barrier_wait, so nobody writes a position while
 * another thread reads positions, and nobody reads a velocity while its
 * owner changes it. Correct: nothing should be reported.
 * mcpredict:args 2 4
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define N 8

static int pos[N], vel[N];
static pthread_barrier_t phase;
static int nthreads, steps;

static void update_velocities(int lo, int hi)
{
	for (int i = lo; i < hi; i++) {
		int pull = 0;
		for (int j = 0; j < N; j++)
			pull += (pos[j] > pos[i]) - (pos[j] < pos[i]);
		vel[i] += pull;
	}
}

static void move_particles(int lo, int hi)
{
	for (int i = lo; i < hi; i++)
		pos[i] += vel[i];
}

static void *simulate(void *arg)
{
	long id = (long)arg;
	int lo = id * N / nthreads, hi = (id + 1) * N / nthreads;
	for (int s = 0; s < steps; s++) {
		update_velocities(lo, hi);
		pthread_barrier_wait(&phase);
		move_particles(lo, hi);
		pthread_barrier_wait(&phase);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	nthreads = argc > 1 ? atoi(argv[1]) : 2;
	steps = argc > 2 ? atoi(argv[2]) : 4;
	if (nthreads < 1 || nthreads > N)
		nthreads = 2;
	for (int i = 0; i < N; i++)
		pos[i] = i * i % 7;
	pthread_barrier_init(&phase, NULL, nthreads);
	pthread_t t[N];
	for (long i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, simulate, (void *)i);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&phase);
	for (int i = 0; i < N; i++)
		printf("%d%c", pos[i], i == N - 1 ? '\n' : ' ');
	return 0;
}
