/*
 * bench_stack.c — a kernel with heavy stack traffic, for the recorder's
 * overhead benchmark: each thread smooths a signal in arrays on its own
 * stack (address-taken locals, so every access is a real load or store
 * that the instrumentation sees), in a function called for every block;
 * once per round it adds its result to a context struct on main's stack,
 * under the lock — main gave that struct to the threads, so the part of
 * main's stack that holds it is recorded, the rest of the stack traffic
 * is not. It prints the time spent in the kernel.
 *
 *   ./bench_stack THREADS ROUNDS
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N 256
#define MAXT 16

struct ctx {
	pthread_mutex_t lock;
	int rounds;
	double sum;
};

__attribute__((noinline)) static double smooth(const double *in, double *out, int n)
{
	double s = 0;
	for (int i = 1; i < n - 1; i++) {
		out[i] = (in[i - 1] + 2 * in[i] + in[i + 1]) / 4;
		s += out[i];
	}
	return s;
}

static void *worker(void *arg)
{
	struct ctx *c = arg;
	double a[N], b[N];
	for (int i = 0; i < N; i++)
		a[i] = b[i] = i % 7;
	for (int r = 0; r < c->rounds; r++) {
		double s = 0;
		for (int k = 0; k < 16; k++)
			s += smooth(k % 2 ? b : a, k % 2 ? a : b, N);
		pthread_mutex_lock(&c->lock);
		c->sum += s;
		pthread_mutex_unlock(&c->lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 1 ? atoi(argv[1]) : 2;
	struct ctx ctx = {.lock = PTHREAD_MUTEX_INITIALIZER, .rounds = argc > 2 ? atoi(argv[2]) : 4};
	if (nthreads < 1 || nthreads > MAXT)
		nthreads = 2;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_t th[MAXT];
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker, &ctx);
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long ns = (t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec);
	printf("kernel_ns %ld sum %.1f\n", ns, ctx.sum);
	return 0;
}
