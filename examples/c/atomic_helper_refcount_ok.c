/*
 * atomic_helper_refcount_ok.c — a reference count kept with "atomic" helpers
 * built on a mutex, after Apache's mod_mem_cache as fixed for bug 21287:
 * the release path frees the object when atomic_dec() returns 0, the
 * value its own decrement left. The twin of atomic_helper_refcount.c (the
 * second holder releases 20 ms later). Correct: nothing should be
 * reported.
 *
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t atomic_mutex = PTHREAD_MUTEX_INITIALIZER;

static int atomic_dec(int *p)
{
	pthread_mutex_lock(&atomic_mutex);
	int v = --*p; /* @dec */
	pthread_mutex_unlock(&atomic_mutex);
	return v;
}

static void atomic_inc(int *p)
{
	pthread_mutex_lock(&atomic_mutex);
	++*p;
	pthread_mutex_unlock(&atomic_mutex);
}

struct object { int refs; char *data; };
static struct object *obj;

static void release(struct object *o)
{
	if (atomic_dec(&o->refs) == 0) {
		free(o->data);
		free(o);
		puts("freed");
	}
}

static void *holder(void *arg)
{
	usleep((long)arg);
	release(obj);
	return NULL;
}

int main(void)
{
	obj = calloc(1, sizeof *obj);
	obj->data = malloc(64);
	atomic_inc(&obj->refs); /* one reference for each holder */
	atomic_inc(&obj->refs);
	pthread_t a, b;
	pthread_create(&a, NULL, holder, (void *)0);
	pthread_create(&b, NULL, holder, (void *)20000);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
