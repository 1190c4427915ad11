/*
 * atomic_helper_refcount.c — a reference count kept with "atomic" helpers
 * built on a mutex, after Apache's mod_mem_cache (bug 21287): the release
 * path decrements the count with atomic_dec() but ignores its result and
 * reads the count again, plainly, to decide whether to free the object.
 * Two holders release it: if the second decrement falls between the
 * first holder's decrement and its plain read, both read 0 and both free
 * the object. The second holder releases 20 ms later, so the recorded run
 * frees it once. Bug: the plain read sees another thread's decrement
 * (P2, or P1 with the helper's read) on obj->refs.
 *
 * mcpredict:expect P2|P1 obj->refs remote:Write@dec local:Read@check
 * mcpredict:notexhibited obj->refs
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
	atomic_dec(&o->refs);
	if (o->refs == 0) { /* @check */
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
