/*
 * vector_copy.c — a locked vector's copy constructor that asks the source
 * for its size and then for its elements in two separate locked calls,
 * after java.util.Vector(Collection) of JDK 1.4.2 (Wang's dissertation,
 * Figure 1.1). Every access is locked (no data race), yet the copy is not
 * atomic: a clear() of the source between the two calls leaves a copy
 * whose count says 8 and whose elements are zeros. Bug: unrepeatable
 * read (P1) of src.count; the reduction-based and commit-node checkers
 * report vec_copy (two critical sections, two commit nodes), the
 * multi-lockset detector no race.
 *
 * The clearing thread starts 20 ms later: the recorded run does not
 * interleave them.
 *
 *   mcpredict cc -O1 -o vector_copy vector_copy.c
 *   mcpredict record -o vc.csv -- ./vector_copy 20 20000
 *   mcpredict run --analysis reduction,commitnode,lockset vc.csv
 *
 * mcpredict:args 20 20000
 * mcpredict:expect P1 src.count local:Read@size remote:Write@clear local:Read@copy
 * mcpredict:notexhibited src.count
 * mcpredict:reports reduction cs-cs
 * mcpredict:reports commitnode view
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

static __attribute__((noinline)) long vec_size(struct vec *v)
{
	pthread_mutex_lock(&v->m);
	long n = v->count; /* @size: first call */
	pthread_mutex_unlock(&v->m);
	return n;
}

/* Copies at most n elements into out; returns how many it copied. */
static __attribute__((noinline)) long vec_to_array(struct vec *v, long *out, long n)
{
	pthread_mutex_lock(&v->m);
	long k = v->count < n ? v->count : n; /* @copy: second call */
	for (long i = 0; i < k; i++)
		out[i] = v->data[i];
	pthread_mutex_unlock(&v->m);
	return k;
}

/* BUG: the size and the elements come from two critical sections. */
static __attribute__((noinline)) long vec_copy(struct vec *from, long *out)
{
	long n = vec_size(from);
	vec_to_array(from, out, n);
	return n;
}

static __attribute__((noinline)) void vec_clear(struct vec *v)
{
	pthread_mutex_lock(&v->m);
	v->count = 0; /* @clear */
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
	printf("copied sum %ld (expected %ld)\n", (long)sum, 36L * rounds);
	return 0;
}
