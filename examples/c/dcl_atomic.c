/*
 * dcl_atomic.c — double-checked locking done right: the singleton pointer
 * is loaded with acquire and published with release, the slow path under a
 * mutex. Correct.
 * mcpredict:args 4
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

struct table { int size; long cells[16]; };
static _Atomic(struct table *) instance;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static struct table *get(void)
{
	struct table *t = atomic_load_explicit(&instance, memory_order_acquire);
	if (!t) {
		pthread_mutex_lock(&m);
		t = atomic_load_explicit(&instance, memory_order_relaxed);
		if (!t) {
			t = calloc(1, sizeof *t);
			t->size = 16;
			for (int i = 0; i < 16; i++)
				t->cells[i] = i;
			atomic_store_explicit(&instance, t, memory_order_release);
		}
		pthread_mutex_unlock(&m);
	}
	return t;
}

static void *work(void *a)
{
	long s = 0;
	for (int i = 0; i < 40; i++) {
		struct table *t = get();
		s += t->cells[i % t->size] + t->size;
	}
	return (void *)s;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t th[8];
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, work, NULL);
	long s = 0;
	for (int i = 0; i < n; i++) {
		void *r;
		pthread_join(th[i], &r);
		s += (long)r;
	}
	printf("%ld\n", s);
	return 0;
}
