/*
 * vector_copy_ok.c — the copy constructor of vector_copy.c done right:
 * the size and the elements are read in one critical section of the
 * source, so a clear() comes before or after the whole copy. Every
 * function is atomic: the reduction-based and commit-node checkers report
 * nothing, nor does the multi-lockset detector.
 *
 * mcpredict:args 20 20000
 * mcpredict:expect none
 * mcpredict:reports reduction none
 * mcpredict:reports commitnode none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct vec {
	pthread_mutex_t m;
	long count;
	long data[16];
};

static struct vec src = { PTHREAD_MUTEX_INITIALIZER, 0, { 0 } };
static int rounds;
static long stagger;

/* Copies the elements into out (16 at most); the caller holds v->m. */
static __attribute__((noinline)) long vec_to_array_locked(struct vec *v, long *out)
{
	long k = v->count;
	for (long i = 0; i < k; i++)
		out[i] = v->data[i];
	return k;
}

static __attribute__((noinline)) long vec_copy(struct vec *from, long *out)
{
	pthread_mutex_lock(&from->m);
	long n = vec_to_array_locked(from, out);
	pthread_mutex_unlock(&from->m);
	return n;
}

static __attribute__((noinline)) void vec_clear(struct vec *v)
{
	pthread_mutex_lock(&v->m);
	v->count = 0;
	pthread_mutex_unlock(&v->m);
}

static __attribute__((noinline)) void vec_fill(struct vec *v, long n)
{
	pthread_mutex_lock(&v->m);
	for (long i = 0; i < n; i++)
		v->data[i] = i + 1;
	v->count = n;
	pthread_mutex_unlock(&v->m);
}

static void *copier(void *arg)
{
	long out[16], sum = 0;
	for (int r = 0; r < rounds; r++) {
		long n = vec_copy(&src, out);
		for (long i = 0; i < n; i++)
			sum += out[i];
	}
	return (void *)sum;
}

static void *cleaner(void *arg)
{
	usleep((useconds_t)stagger);
	for (int r = 0; r < rounds; r++) {
		vec_clear(&src);
		vec_fill(&src, 8);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atoi(argv[1]) : 20;
	stagger = argc > 2 ? atol(argv[2]) : 0;
	vec_fill(&src, 8);
	pthread_t a, b;
	pthread_create(&a, NULL, copier, NULL);
	pthread_create(&b, NULL, cleaner, NULL);
	void *sum;
	pthread_join(a, &sum);
	pthread_join(b, NULL);
	printf("copied sum %ld\n", (long)sum);
	return 0;
}
